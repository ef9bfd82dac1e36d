"""A turn's changes in the seed's shape (B20 ``chat.turnDiff``: a CheckpointDiff), from the
store's own (storage/checkpoints/). Pure."""
from __future__ import annotations

SEED_KINDS = {"added": "added", "modified": "modified", "deleted": "deleted", "renamed": "renamed"}


def seed_diff(listed: dict) -> dict:
    """``{files: [{path, kind, added, deleted, diff, omitted?}], truncated}``: a binary file's
    diff is omitted ("binary"), one whose hunks were cut is marked "too-large"."""
    files = []
    for entry in listed["files"]:
        out = {"path": entry["path"], "kind": SEED_KINDS.get(entry["status"], "modified"),
               "added": entry["added"], "deleted": entry["removed"], "diff": ""}
        if entry.get("binary"):
            out["omitted"] = "binary"
        else:
            out["diff"] = "\n".join(line for hunk in entry.get("hunks", ())
                                    for line in (hunk["header"], *hunk["lines"]))
            if entry.get("truncated"):
                out["omitted"] = "too-large"
        files.append(out)
    return {"files": files, "truncated": any(f.get("omitted") == "too-large" for f in files)}
