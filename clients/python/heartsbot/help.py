"""Command-line help shared by every Hearts Arena command (heartsbot, heartsd)."""

from __future__ import annotations

import argparse


class DefaultsHelp(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default in its help text, except where there is none to show
    (no default, a flag that is off, or a help text that states it already)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        default = action.default
        if default is None or default is False or default == "" or default is argparse.SUPPRESS \
                or "%(default)" in (action.help or "") \
                or "default" in (action.help or ""):
            return action.help or ""
        return super()._get_help_string(action) or ""
