"""Top-floor tools of mjenv: commands and builders that use every floor below (the ``mjenv replay`` command,
the ``mjenv dataset`` command, the compiled-code store builder).  Nothing below imports them."""
