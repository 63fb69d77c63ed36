"""Pure rules: options, hand analysis and scoring. Knows nothing of agents, observations or envs."""
