"""Model providers: the chat-model factory and one small module per provider dialect.

Modules: `factory` builds the chat model; `detection` chooses the dialect;
`deepseek`, `qwen`, `kimi`, `glm`, `vllm`, `ollama`, `openrouter`, `openai`, `generic` hold
each dialect's facts; `reasoning` and `usage` read and send what differs on the wire;
`tokens` estimates prompt sizes and knows context windows; `errors` describes failures.
Below `graph/` in the layers: nothing here imports graph, tools or cli. Kept empty so
that importing a submodule does not import LangChain.
"""
