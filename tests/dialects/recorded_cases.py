"""The IR request behind each recorded openai_completions reply.

Lowering each request must give exactly the body recorded in
``tests/fixtures/openai_completions/0.32.0/<name>.json`` (the dialect tests assert it); the
client-overhead benchmark replays the same pairs.
"""

from __future__ import annotations

from sieval.ir.request import CompletionInput, Request, Sampling, Scheduling, Scoring

QA = "Question: What is the capital of France?\nAnswer: Paris"
GREEDY_1 = Sampling(temperature=0.0, max_tokens=1)

CASES: dict[str, Request] = {
    "echo_score": Request.completion(QA, sampling=GREEDY_1, scoring=Scoring(input_logprobs=True)),
    "echo_top3": Request.completion(
        QA, sampling=GREEDY_1, scoring=Scoring(input_logprobs=True, input_top_k=3)
    ),
    "echo_max_tokens_0": Request.completion(
        QA,
        sampling=Sampling(temperature=0.0, max_tokens=0),
        scoring=Scoring(input_logprobs=True, input_top_k=1),
    ),
    "echo_cjk": Request.completion(
        "中国的首都是北京。", sampling=GREEDY_1, scoring=Scoring(input_logprobs=True, input_top_k=2)
    ),
    "gen_top5": Request.completion(
        "The capital of France is",
        sampling=Sampling(temperature=0.0, max_tokens=8),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=5),
    ),
    "gen_stop": Request.completion(
        "1, 2, 3, 4,", sampling=Sampling(temperature=0.0, max_tokens=30, stop=(" 8",))
    ),
    "n2_temp1": Request.completion(
        "Once upon a time",
        sampling=Sampling(n=2, temperature=1.0, seed=7, max_tokens=6),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
    ),
    "stream": Request.completion(
        "The capital of France is",
        sampling=Sampling(temperature=0.0, max_tokens=6),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=1),
        scheduling=Scheduling(stream=True),
    ),
    "stream_echo": Request.completion(
        QA,
        sampling=GREEDY_1,
        scoring=Scoring(input_logprobs=True, input_top_k=2),
        scheduling=Scheduling(stream=True),
    ),
    "error_logprobs_101": Request.completion(
        QA,
        sampling=Sampling(max_tokens=1),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=101),
    ),
    "error_suffix": Request(
        input=CompletionInput(text="def f(", suffix="return x"), sampling=Sampling(max_tokens=4)
    ),
    "error_context_overflow": Request.completion(
        "hello " * 4200, sampling=Sampling(max_tokens=4, temperature=0.0)
    ),
}
