"""The chat core (seed "Chats and turns"): thread, queue, requests, persistence rules. Plain logic."""
