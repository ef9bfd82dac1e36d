"""The chat core: thread, queue, requests, persistence rules. Plain logic."""
