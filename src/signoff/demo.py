"""`signoff.demo:build_agent` is stored in every demo run (its agent reference), so this
path stays importable for good; the demo itself lives in `signoff.cli.demo`."""

from .cli.demo import AGENT_REF, build_agent

__all__ = ["AGENT_REF", "build_agent"]
