"""Independent readers of ROS 2 bags for the tests, without rosbags: MCAP
through `mcap` + `mcap-ros2-support`, sqlite3 (.db3) through Python's sqlite3
with the CDR payloads decoded by mcap-ros2-support from the definitions the
.db3 stores. Both return (log times int64 [n] ns, [decoded message]) of one
topic in log-time order (file order for equal times, as a bag reader that
sorts by log time yields them)."""

import sqlite3

import numpy as np
from mcap.reader import NonSeekingReader
from mcap.records import Schema
from mcap_ros2.decoder import DecoderFactory


def _in_log_order(rows):
    times = np.array([t for t, _ in rows], dtype=np.int64)
    order = np.argsort(times, kind="stable")
    return times[order], [rows[k][1] for k in order]


def mcap_messages(path, topic):
    with open(path, "rb") as f:
        reader = NonSeekingReader(f, decoder_factories=[DecoderFactory()])
        rows = [(m.log_time, decoded) for _, _, m, decoded in
                reader.iter_decoded_messages(topics=[topic], log_time_order=False)]
    return _in_log_order(rows)


def sqlite_messages(path, topic):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        topic_id, msgtype = con.execute("SELECT id, type FROM topics WHERE name = ?",
                                        (topic,)).fetchone()
        (definition,) = con.execute("SELECT encoded_message_definition FROM "
                                    "message_definitions WHERE topic_type = ?",
                                    (msgtype,)).fetchone()
        decoder = DecoderFactory().decoder_for(
            "cdr", Schema(id=1, name=msgtype, encoding="ros2msg", data=definition.encode()))
        rows = [(t, decoder(data)) for t, data in con.execute(
            "SELECT timestamp, data FROM messages WHERE topic_id = ? ORDER BY id", (topic_id,))]
    finally:
        con.close()
    return _in_log_order(rows)


def sqlite_counts(path):
    """{topic: message rows} of a .db3."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(con.execute("SELECT t.name, COUNT(m.id) FROM topics t LEFT JOIN messages m "
                                "ON m.topic_id = t.id GROUP BY t.id"))
    finally:
        con.close()
