"""ray (optional extra robocache[ray]), imported when robocache.ray runs."""

from ..datasets._deps import require


def ray_data():
    """ray.data; ImportError naming pip install 'robocache[ray]' when missing."""
    require("ray", extra="ray", purpose="run conversions on Ray")
    return require("ray.data", extra="ray", purpose="run conversions on Ray")
