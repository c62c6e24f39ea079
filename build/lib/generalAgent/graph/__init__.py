"""The agent graph: state, the turn input, prompts, history handling and the nodes."""
