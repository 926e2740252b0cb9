"""The HTTP service over one lake: `create_app(lake)`, or `lakeplanner serve --lake DIR`."""

from lakeplanner.service.app import create_app
from lakeplanner.service.settings import ServeSettings

__all__ = ["ServeSettings", "create_app"]
