"""Failed responses: which ones mean the prompt did not fit, which are worth another try, and
retrying them.

``_overflow`` classifies a failed assistant message (context overflow, transient error);
``_retry`` is the policy, its backoff and the retry loop built on that classification."""
