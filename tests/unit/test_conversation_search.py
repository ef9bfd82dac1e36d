"""The panel's search over a page's conversations reads at most a budget of items in all, the
newest conversations first, and says when older ones went unread."""
from __future__ import annotations

from web.routes.conversations import search_conversations


def conversation(number: int, title: str, *texts: str) -> tuple[dict, list[dict]]:
    return {"id": f"s{number}", "title": title}, [{"kind": "user", "text": t} for t in texts]


def reader(conversations):
    read = []
    items = {record["id"]: kept for record, kept in conversations}

    def read_items(record, most):
        read.append((record["id"], most))
        kept = items.get(record["id"])
        return None if kept is None else kept[-most:]
    return read_items, read


def test_a_title_match_needs_no_reading_and_a_text_match_carries_its_excerpt():
    conversations = [conversation(1, "Fix the cart", "nothing here"),
                     conversation(2, "Other", "the cart total is wrong")]
    read_items, read = reader(conversations)
    found = search_conversations([r for r, _ in conversations], read_items, "cart")
    assert found == {"sessions": [{"id": "s1", "title": "Fix the cart", "in": "title"},
                                  {"id": "s2", "title": "Other", "in": "text", "excerpt": "the cart total is wrong"}],
                     "truncated": False}
    assert [name for name, _ in read] == ["s2"]


def test_the_budget_stops_the_reading_and_says_truncated_but_titles_still_match():
    conversations = [conversation(n, f"Talk {n}", *["words"] * 40) for n in range(1, 6)]
    conversations.append(conversation(6, "the cart, in its title"))
    conversations.insert(0, conversation(0, "Newest", "cart at last"))
    read_items, read = reader(conversations)
    found = search_conversations([r for r, _ in conversations], read_items, "cart", budget=100)
    assert [s["id"] for s in found["sessions"]] == ["s0", "s6"]
    assert found["truncated"] is True
    assert sum(len(kept) for kept in (c[1] for c in conversations[:4])) >= 100
    assert read == [("s0", 100), ("s1", 99), ("s2", 59), ("s3", 19)]  # each asked for what is left


def test_a_conversation_deleted_meanwhile_is_skipped():
    record, _ = conversation(1, "Gone")
    found = search_conversations([record], lambda record, most: None, "cart")
    assert found == {"sessions": [], "truncated": False}
