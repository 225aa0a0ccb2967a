"""Writes a rosbag2 MCAP with rosbags' Writer, for the convert and Ray tests:

    python camera_bag.py PATH FRAMES SEED HEIGHT WIDTH

/cam: FRAMES sensor_msgs/Image rgb8 frames at 30 fps from t = 1 s, frame i = one
random HEIGHT x WIDTH image (NumPy default_rng(SEED)) rolled i columns;
/imu: sensor_msgs/Imu at 210 Hz (7 per frame, k = 0..6), angular_velocity
(i, k, 0), linear_acceleration (i, k, SEED). header.stamp = the log time."""

import sys

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore


def main(path, n, seed, h, w):
    ts = get_typestore(Stores.ROS2_HUMBLE)
    Img, Imu = ts.types["sensor_msgs/msg/Image"], ts.types["sensor_msgs/msg/Imu"]
    Hd, T = ts.types["std_msgs/msg/Header"], ts.types["builtin_interfaces/msg/Time"]
    Q, V = ts.types["geometry_msgs/msg/Quaternion"], ts.types["geometry_msgs/msg/Vector3"]
    S, cov = 10**9, np.zeros(9)
    base = np.random.default_rng(seed).integers(0, 255, (h, w, 3), dtype=np.uint8)
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as bag:
        ci = bag.add_connection("/cam", Img.__msgtype__, typestore=ts)
        cu = bag.add_connection("/imu", Imu.__msgtype__, typestore=ts)
        for i in range(n):
            t = S + i * S // 30
            img = np.roll(base, i, axis=1).reshape(-1)
            bag.write(ci, t, ts.serialize_cdr(Img(Hd(T(t // S, t % S), "cam"), h, w, "rgb8", 0,
                                                  3 * w, img), Img.__msgtype__))
            for k in range(7):
                u = t + k * S // 210
                imu = Imu(Hd(T(u // S, u % S), "imu"), Q(0, 0, 0, 1), cov, V(i, k, 0), cov,
                          V(i, k, seed), cov)
                bag.write(cu, u, ts.serialize_cdr(imu, Imu.__msgtype__))


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:6]))
