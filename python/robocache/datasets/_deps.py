"""Optional dependencies of the dataset readers, imported only when a format needs them."""

import importlib


def require(module, *, extra="datasets", purpose=None):
    """Imports and returns `module`; ImportError naming the pip extra when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        what = f" to {purpose}" if purpose else ""
        raise ImportError(
            f"robocache.datasets needs the Python package '{module.split('.')[0]}'{what}; "
            f"install the optional extra: pip install 'robocache[{extra}]'") from e
