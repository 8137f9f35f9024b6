"""`rxagent rag ingest|search`: fill a knowledge base from files, and search it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rxagent.cli._common import EXIT_OK, utf8_safe
from rxagent.errors import CliError

if TYPE_CHECKING:
    import argparse

    from rxagent.rag import KnowledgeBase

__all__ = ["add_rag_parser"]

KB_ENV: Final = "RXAGENT_KB"
API_KEY_ENV: Final = "QDRANT_API_KEY"
DEFAULT_KB: Final = ".rxagent/qdrant"
"""Where `rxagent rag` keeps its knowledge base by default: `rxagent.rag.DEFAULT_PATH`."""
_BATCH: Final = 16
_CLIP: Final = 300


def add_rag_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the `rag` command group to the `commands` subparsers."""
    rag = commands.add_parser(
        "rag",
        parents=parents,
        help="fill a knowledge base from files, or search it",
        description="Fill a knowledge base (Qdrant) from files, or search it.",
    )
    actions = rag.add_subparsers(dest="action", metavar="ACTION", required=True)
    ingest = actions.add_parser(
        "ingest",
        parents=parents,
        help="add files (Markdown, text, reStructuredText, HTML, Python) to the knowledge base",
        description=(
            "Add files to the knowledge base; folders are read recursively. A file whose "
            "content did not change since it was added is skipped; a changed one is replaced."
        ),
    )
    ingest.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    search = actions.add_parser(
        "search", parents=parents, help="search the knowledge base", description="Search it."
    )
    search.add_argument("query", help="what to look for")
    search.add_argument("-k", type=int, default=5, help="how many chunks (default: 5)")
    search.add_argument("--json", action="store_true", help="print the hits as JSON")
    for sub in (ingest, search):
        sub.add_argument(
            "--kb",
            metavar="PATH|URL",
            help=f"a local-mode folder or a Qdrant server URL (default: ${KB_ENV}, else "
            f"{DEFAULT_KB}); a server's API key comes from ${API_KEY_ENV}",
        )
        sub.add_argument("--collection", default="rxagent", help="the collection's name")
        sub.add_argument(
            "--sparse-only",
            action="store_true",
            help="BM25 search only, with no embedding model (the default uses all-MiniLM-L6-v2 "
            "when its weights are installed)",
        )
    ingest.set_defaults(handler=lambda args: asyncio.run(_ingest(args)))
    search.set_defaults(handler=lambda args: asyncio.run(_search(args)))


def _open(args: argparse.Namespace) -> KnowledgeBase:
    from rxagent.rag import KnowledgeBase  # the command's own: qdrant-client loads slowly

    location = args.kb or os.environ.get(KB_ENV) or DEFAULT_KB
    extra: dict[str, Any] = {"embedder": None} if args.sparse_only else {}
    return KnowledgeBase(
        location, api_key=os.environ.get(API_KEY_ENV), collection=args.collection, **extra
    )


def _files(paths: list[str]) -> list[Path]:
    """The readable files of `paths`, folders walked (hidden entries skipped), in order."""
    from rxagent.rag import SUFFIXES

    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found.extend(
                p
                for p in sorted(path.rglob("*"))
                if p.is_file()
                and p.suffix.lower() in SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        elif path.is_file():
            if path.suffix.lower() not in SUFFIXES:
                raise CliError(
                    f"{given}: cannot read {path.suffix or 'files without a suffix'}; readable: "
                    f"{', '.join(sorted(SUFFIXES))}"
                )
            found.append(path)
        else:
            raise CliError(f"{given}: no such file or folder")
    return list(dict.fromkeys(found))


def _doc_id(path: Path) -> str:
    """The document id of a file: its path relative to the current folder when inside it."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return resolved.as_posix()


async def _ingest(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from rxagent.rag import read_document

    files = _files(args.paths)
    err = Console(file=utf8_safe(sys.stderr), highlight=False)
    added = skipped = chunks_before = 0
    async with _open(args) as kb:
        chunks_before = await kb.count()
        with Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=err,
            transient=True,
        ) as progress:
            task = progress.add_task("ingesting", total=len(files))
            for start in range(0, len(files), _BATCH):
                batch = files[start : start + _BATCH]
                ids = [_doc_id(f) for f in batch]
                known = await kb.documents(ids)
                texts: list[str] = []
                metadatas: list[dict[str, Any]] = []
                changed: list[str] = []
                for file, doc_id in zip(batch, ids, strict=True):
                    digest = hashlib.sha256(file.read_bytes()).hexdigest()
                    if known.get(doc_id, {}).get("sha256") == digest:
                        skipped += 1
                        continue
                    texts.append(read_document(file))
                    metadatas.append({"source": doc_id, "sha256": digest, "kind": file.suffix[1:]})
                    changed.append(doc_id)
                if changed:
                    await kb.add_texts(texts, metadatas=metadatas, ids=changed)
                    added += len(changed)
                progress.advance(task, len(batch))
        total = await kb.count()
        where = kb.location
    print(
        f"ingested {added} file(s), skipped {skipped} unchanged; {where} collection "
        f"{args.collection!r} holds {total} chunks ({total - chunks_before:+d})"
    )
    return EXIT_OK


async def _search(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.text import Text

    if args.k < 1:
        raise CliError("-k must be at least 1")
    async with _open(args) as kb:
        hits = await kb.search(args.query, k=args.k)
    if args.json:
        print(json.dumps([hit.model_dump() for hit in hits], ensure_ascii=False))
        return EXIT_OK
    out = Console(file=utf8_safe(sys.stdout), highlight=False, soft_wrap=True)
    if not hits:
        print("no matching chunks", file=sys.stderr)
        return EXIT_OK
    for number, hit in enumerate(hits, 1):
        heading = hit.metadata.get("heading")
        title = Text(f"[{number}] ", style="bold")
        title.append(str(hit.metadata.get("source", hit.id)), style="cyan")
        if heading:
            title.append(f" ({heading})")
        title.append(f"  score {hit.score:.3f}", style="dim")
        out.print(title)
        text = hit.text if len(hit.text) <= _CLIP else hit.text[:_CLIP] + " …"
        out.print(Text(text))
        out.print()
    return EXIT_OK
