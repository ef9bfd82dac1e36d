"""The reliability suite runs real daemons and CLIs, as the integration tests do."""
from tests.integration.conftest import daemon, daemon_env, mock, openai, stack  # noqa: F401 - shared fixtures
