"""A RetrievalEvent in the AI SDK UI stream: a transient data part with the hits' sources."""

from __future__ import annotations

from rxagent import Msg, PreCallEvent, RetrievalEvent
from rxagent.rag import Hit
from rxagent.server._ui_chunks import UIMessageStreamTranslator


def test_a_retrieval_becomes_a_transient_data_part():
    translator = UIMessageStreamTranslator()
    common = {"run_id": "run-1", "session_id": "s-1", "agent": "bot"}
    translator.translate(PreCallEvent(input=[Msg.user("hi")], seq=1, **common))
    hit = Hit(id="a", text="A text.", score=0.5, metadata={"source": "a.md", "position": 2})
    event = RetrievalEvent(query="q", hits=(hit,), tokens=12, dropped=("b",), seq=2, **common)
    assert translator.translate(event) == [
        {
            "type": "data-retrieval",
            "data": {
                "query": "q",
                "tokens": 12,
                "hits": [{"id": "a", "score": 0.5, "source": "a.md", "position": 2}],
                "dropped": ["b"],
            },
            "transient": True,
        }
    ]
