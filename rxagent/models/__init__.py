"""Chat models: the `ChatModel` protocol, its typed deltas and options.

Provider clients plug into this seam; the test models live in `rxagent.testing`.
"""

from rxagent.models.base import ChatModel as ChatModel
from rxagent.models.base import FinishDelta as FinishDelta
from rxagent.models.base import ModelDelta as ModelDelta
from rxagent.models.base import ModelOptions as ModelOptions
from rxagent.models.base import ModelResponse as ModelResponse
from rxagent.models.base import ResponseBuilder as ResponseBuilder
from rxagent.models.base import TextDelta as TextDelta
from rxagent.models.base import ThinkingDelta as ThinkingDelta
from rxagent.models.base import ToolCallDelta as ToolCallDelta
from rxagent.models.base import ToolChoice as ToolChoice
from rxagent.models.base import ToolSchema as ToolSchema
from rxagent.models.base import Usage as Usage
from rxagent.models.base import UsageDelta as UsageDelta

__all__ = [
    "ChatModel",
    "FinishDelta",
    "ModelDelta",
    "ModelOptions",
    "ModelResponse",
    "ResponseBuilder",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolChoice",
    "ToolSchema",
    "Usage",
    "UsageDelta",
]
