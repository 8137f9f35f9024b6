"""Tool selection: how often the right tool is offered, and what choosing costs.

Run: `python bench/tool_selection.py` (`--quick` for a smoke run; `--embedder local` adds
`EmbeddingSelector(LocalEmbedder())` when the MiniLM weights and `rxagent.rag.LocalEmbedder` are
installed).

**Quality.** 40 tools of a support desk, each asked for twice: once with words of its name or
description ("refund order 17"), once in other words ("I want my money back for order 17").
For each message and each N in (1, 3, 5), a hit is the right tool among the N offered. The
baseline is `AllTools()` (the first N tools), which any selector must beat.

**Cost.** The median CPU time of one `select()` over 40, 200 and 1000 tools (the tools beyond
the 40 are variations with numbered names), for the keyword selector; the embedding selector's
first call embeds every tool (cached after), so its steady cost is the message's embedding.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Any

from rxagent.models.base import ToolSchema
from rxagent.tools import AllTools, EmbeddingSelector, KeywordSelector, ToolSelector

clock = time.process_time

# (name, description, message with shared words, message in other words)
CASES: tuple[tuple[str, str, str, str], ...] = (
    (
        "lookup_order",
        "Look an order up by its number.",
        "look up order 17",
        "where is my parcel 17?",
    ),
    (
        "refund_order",
        "Refund an order to the customer.",
        "refund order 17",
        "I want my money back for order 17",
    ),
    (
        "cancel_order",
        "Cancel an order that has not shipped.",
        "cancel order 9",
        "please stop order 9 before it leaves",
    ),
    (
        "track_shipment",
        "Track a shipment with the carrier.",
        "track my shipment",
        "which truck has my package now?",
    ),
    (
        "change_address",
        "Change the delivery address of an order.",
        "change the delivery address",
        "I moved, send it to my new flat",
    ),
    ("create_ticket", "Open a support ticket.", "open a support ticket", "log a complaint for me"),
    (
        "close_ticket",
        "Close a support ticket as solved.",
        "close ticket 4",
        "my problem 4 is fixed now",
    ),
    (
        "escalate_ticket",
        "Escalate a ticket to a manager.",
        "escalate this ticket",
        "let me talk to your boss",
    ),
    ("send_email", "Send an email message.", "send an email to Bo", "drop Bo a note in his inbox"),
    (
        "send_sms",
        "Send a text message to a phone.",
        "send a text message",
        "ping my mobile with the code",
    ),
    (
        "get_weather",
        "The weather forecast for a city.",
        "weather in Oslo",
        "will it rain in Oslo tomorrow?",
    ),
    (
        "convert_currency",
        "Convert an amount between currencies.",
        "convert 20 euros to dollars",
        "how many dollars is 20 euros",
    ),
    (
        "translate_text",
        "Translate a text into another language.",
        "translate this text",
        "say this in French",
    ),
    (
        "search_docs",
        "Search the product documentation.",
        "search the docs for setup",
        "how do I install it, per the manual?",
    ),
    ("list_products", "List the products in the catalog.", "list products", "what do you sell?"),
    (
        "check_stock",
        "Check the stock level of a product.",
        "check stock of lamps",
        "are lamps still available?",
    ),
    (
        "apply_coupon",
        "Apply a coupon code to the cart.",
        "apply coupon SAVE10",
        "use my discount code SAVE10",
    ),
    (
        "create_invoice",
        "Create an invoice for an order.",
        "create an invoice",
        "I need a bill for my purchase",
    ),
    (
        "update_payment",
        "Update the stored payment card.",
        "update my payment card",
        "my credit card expired, use the new one",
    ),
    (
        "reset_password",
        "Reset a user's password.",
        "reset my password",
        "I can't log in, forgot my secret",
    ),
    (
        "delete_account",
        "Delete a user account and its data.",
        "delete my account",
        "erase everything you know about me",
    ),
    (
        "export_data",
        "Export a user's data as a file.",
        "export my data",
        "give me a copy of my records",
    ),
    (
        "schedule_call",
        "Schedule a call with support.",
        "schedule a call",
        "can someone phone me on Monday?",
    ),
    (
        "book_repair",
        "Book a repair appointment for a device.",
        "book a repair",
        "my washing machine broke, send a technician",
    ),
    (
        "get_opening_hours",
        "The opening hours of a store.",
        "opening hours of the store",
        "when does the shop open on Sunday?",
    ),
    (
        "find_store",
        "Find the nearest store.",
        "find a store near me",
        "is there a shop close to my home?",
    ),
    (
        "rate_service",
        "Rate the support you received.",
        "rate the service",
        "I'd like to give feedback on the help",
    ),
    (
        "subscribe_newsletter",
        "Subscribe to the newsletter.",
        "subscribe to the newsletter",
        "put me on your mailing list",
    ),
    (
        "unsubscribe",
        "Unsubscribe from all emails.",
        "unsubscribe me",
        "stop sending me marketing mails",
    ),
    (
        "get_invoice_status",
        "The payment status of an invoice.",
        "invoice status",
        "has my bill been paid?",
    ),
    (
        "calculate_shipping",
        "Calculate the shipping cost to an address.",
        "calculate shipping cost",
        "how much is delivery to Bergen?",
    ),
    (
        "return_label",
        "Create a return label for a parcel.",
        "print a return label",
        "I need to send the shoes back",
    ),
    (
        "warranty_check",
        "Check the warranty of a device.",
        "check warranty",
        "is my laptop still covered?",
    ),
    (
        "loyalty_points",
        "The loyalty points balance of a customer.",
        "loyalty points balance",
        "how many bonus points have I collected?",
    ),
    (
        "gift_card_balance",
        "The balance of a gift card.",
        "gift card balance",
        "how much is left on my voucher?",
    ),
    (
        "order_history",
        "List a customer's past orders.",
        "show order history",
        "what did I buy last year?",
    ),
    (
        "recommend_products",
        "Recommend products for a customer.",
        "recommend products",
        "what else might I like?",
    ),
    ("report_bug", "Report a bug in the app.", "report a bug", "the app crashes when I tap pay"),
    (
        "set_language",
        "Set the preferred language.",
        "set my language",
        "talk to me in Spanish from now on",
    ),
    (
        "get_policy",
        "The store's return and privacy policy.",
        "return policy",
        "how long do I have to bring things back?",
    ),
)
SIZES = (40, 200, 1000)


def tools(count: int) -> list[ToolSchema]:
    """The 40 tools, then numbered variations of them up to `count`."""
    base = [ToolSchema(name=n, description=d) for n, d, _, _ in CASES]
    extra = [
        ToolSchema(name=f"{t.name}_{i}", description=f"{t.description} (variant {i})")
        for i in range(1, count // len(base) + 1)
        for t in base
    ]
    return (base + extra)[:count]


async def quality(selector: ToolSelector, ns: tuple[int, ...]) -> dict[str, dict[int, float]]:
    """Hit rates: the right tool among the N offered, for shared-word and other-word messages."""
    schemas = tools(len(CASES))
    rates: dict[str, dict[int, float]] = {}
    for kind, column in (("shared words", 2), ("other words", 3)):
        hits = dict.fromkeys(ns, 0)
        for case in CASES:
            ranked = [t.name for t in await selector.select(case[column], schemas, max(ns))]
            for n in ns:
                hits[n] += case[0] in ranked[:n]
        rates[kind] = {n: hits[n] / len(CASES) for n in ns}
    return rates


async def cost(selector: ToolSelector, size: int, repeats: int) -> float:
    """Median CPU microseconds of one select() over `size` tools (after one warm-up)."""
    schemas = tools(size)
    await selector.select("warm up the caches", schemas, 5)
    samples = []
    for i in range(repeats):
        start = clock()
        await selector.select(CASES[i % len(CASES)][3], schemas, 5)
        samples.append(clock() - start)
    return statistics.median(samples) * 1e6


def selectors(embedder: str | None) -> dict[str, ToolSelector]:
    found: dict[str, ToolSelector] = {
        "AllTools (first N)": AllTools(),
        "KeywordSelector": KeywordSelector(),
    }
    if embedder == "local":
        try:
            from rxagent.rag import LocalEmbedder
        except ImportError as exc:
            print(f"(no EmbeddingSelector row: {exc})")
        else:
            found["EmbeddingSelector(LocalEmbedder)"] = EmbeddingSelector(LocalEmbedder())
    return found


async def measure(embedder: str | None, sizes: tuple[int, ...], repeats: int) -> dict[str, Any]:
    ns = (1, 3, 5)
    results: dict[str, Any] = {}
    for name, selector in selectors(embedder).items():
        row: dict[str, Any] = {"quality": await quality(selector, ns)}
        row["cost_us"] = {size: await cost(selector, size, repeats) for size in sizes}
        results[name] = row
    return results


def report(results: dict[str, Any]) -> str:
    lines = ["right tool offered (hit rate at N = 1 / 3 / 5), 40 tools, 40 messages each:"]
    for name, row in results.items():
        for kind, rates in row["quality"].items():
            figures = " / ".join(f"{rates[n]:.0%}" for n in (1, 3, 5))
            lines.append(f"  {name:36} {kind:13} {figures}")
    lines.append("median CPU time of one select(), by toolkit size:")
    for name, row in results.items():
        figures = "  ".join(f"{size} tools: {us:,.0f} µs" for size, us in row["cost_us"].items())
        lines.append(f"  {name:36} {figures}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--embedder", choices=["local"], help="add an embedding selector")
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args(argv)
    sizes = (40,) if args.quick else SIZES
    repeats = 3 if args.quick else args.repeats
    print(report(asyncio.run(measure(args.embedder, sizes, repeats))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
