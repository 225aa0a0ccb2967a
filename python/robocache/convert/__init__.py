"""robocache.convert: recordings -> training datasets on one frame grid
(LeRobot v3.0, robomimic HDF5), and timestamp audits of LeRobot datasets.

    from robocache.convert import convert, check
    convert(["data/robot/ros1/robot_localization_test1.bag"], "husky", to="lerobot", fps=30,
            streams=["observation.state=/husky_velocity_controller/odom/pose"])
    problems = check("husky")

The alignment is robocache.align (the C core). See docs/convert.md.
"""

from ._convert import convert
from ._errors import ConvertError, OutputError, exit_code
from ._spec import SpecError, StreamSpec, parse_stream

__all__ = ["ConvertError", "OutputError", "SpecError", "StreamSpec", "convert", "exit_code",
           "parse_stream"]
