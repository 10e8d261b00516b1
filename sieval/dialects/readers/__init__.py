"""The channel readers of one wire's reply shape (echoed prompts, ``prompt_logprobs``, Google's
decoding steps, SGLang's triples, Responses' parts), built on ``channels.py``'s primitives; a
dialect's ``Reply`` declaration names them."""
