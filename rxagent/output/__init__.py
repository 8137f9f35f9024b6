"""Structured output: building blocks for reading a model's JSON answer while it streams.

The package holds the pieces that structured output is built from: the incremental
partial-JSON parser (`rxagent.output._partial`) and the JSON schemas each provider accepts
(`rxagent.output._schema`). Nothing is exported yet: the public surface is settled once the
pieces above them exist.
"""

__all__: list[str] = []
