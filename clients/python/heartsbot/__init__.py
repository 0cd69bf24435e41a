"""heartsbot: the reference Hearts Arena bot client and its house strategies."""

__version__ = "0.1.0"
