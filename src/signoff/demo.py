"""`signoff.demo:build_agent` is stored in every demo run (its agent reference), so this
path stays importable for good; the demo itself lives in `signoff.cli.demo`
(its script in `signoff.cli.demo_script`)."""

from .cli.demo_script import AGENT_REF, build_agent

__all__ = ["AGENT_REF", "build_agent"]
