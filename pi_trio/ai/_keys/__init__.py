"""API keys: where each provider's key is read from, and keeping keys clean on their way into a
request and out of every error text.

``_env`` knows the environment variables of each provider; ``_secrets`` cleans a key where it
enters a request and redacts keys from texts."""
