"""tf.train.Example without TensorFlow: the message declared here, parsed by `protobuf`.

The declaration follows TensorFlow's example.proto / feature.proto (field
numbers are what the wire format depends on): Example{Features features = 1},
Features{map<string, Feature> feature = 1}, Feature{oneof kind {BytesList
bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3}}, and the
three lists with `repeated value = 1`. It lives in a private descriptor pool,
so it never clashes with another copy of the same message in the process
(TensorFlow's, or the `tfrecord` package's example_pb2).
"""

import numpy as np

from ._deps import require

_PACKAGE = "robocache.tfexample"
_Example = None


def _declare():
    require("google.protobuf", purpose="parse tf.train.Example records")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="robocache_tf_example.proto",
                                               package=_PACKAGE, syntax="proto3")
    for name, kind in (("BytesList", field.TYPE_BYTES), ("FloatList", field.TYPE_FLOAT),
                       ("Int64List", field.TYPE_INT64)):
        proto.message_type.add(name=name).field.add(name="value", number=1,
                                                    label=field.LABEL_REPEATED, type=kind)
    feature = proto.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, (snake, name) in enumerate((("bytes_list", "BytesList"),
                                            ("float_list", "FloatList"),
                                            ("int64_list", "Int64List")), start=1):
        feature.field.add(name=snake, number=number, label=field.LABEL_OPTIONAL,
                          type=field.TYPE_MESSAGE, type_name=f".{_PACKAGE}.{name}",
                          oneof_index=0)
    features = proto.message_type.add(name="Features")
    entry = features.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, label=field.LABEL_OPTIONAL, type=field.TYPE_STRING)
    entry.field.add(name="value", number=2, label=field.LABEL_OPTIONAL,
                    type=field.TYPE_MESSAGE, type_name=f".{_PACKAGE}.Feature")
    features.field.add(name="feature", number=1, label=field.LABEL_REPEATED,
                       type=field.TYPE_MESSAGE, type_name=f".{_PACKAGE}.Features.FeatureEntry")
    example = proto.message_type.add(name="Example")
    example.field.add(name="features", number=1, label=field.LABEL_OPTIONAL,
                      type=field.TYPE_MESSAGE, type_name=f".{_PACKAGE}.Features")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.Example"))


def parse(data):
    """The features of one serialized tf.train.Example: dict key -> numpy
    float32 [n] (float_list), numpy int64 [n] (int64_list), list of bytes
    (bytes_list) or None (a feature with no list set). Raises
    google.protobuf.message.DecodeError on bytes that are not an Example."""
    global _Example
    if _Example is None:
        _Example = _declare()
    example = _Example()
    example.ParseFromString(data)
    out = {}
    for key, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        if kind == "float_list":
            out[key] = np.array(feature.float_list.value, dtype=np.float32)
        elif kind == "int64_list":
            out[key] = np.array(feature.int64_list.value, dtype=np.int64)
        elif kind == "bytes_list":
            out[key] = list(feature.bytes_list.value)
        else:
            out[key] = None
    return out
