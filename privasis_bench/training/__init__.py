"""Training a compact cleaner: SFT data export, training recipes, the TRL trainer wrapper and the model card.

:mod:`sources` (benchmark-schema rows from a task or a file), :mod:`overlap` (id, exact and near-duplicate
matches against evaluation tasks), :mod:`sft_export` (chat-format JSONL whose user turn is the evaluation
prompt), :mod:`recipe` (training recipe YAMLs), :mod:`trainer` (Hugging Face TRL ``SFTTrainer``, optional LoRA)
and :mod:`card` (what a trained model directory records about how it was made).

May import: ``privasis_bench.errors``, ``data``, ``tasks``, ``protocol`` (the shared sanitize prompt and the
deterministic judge) and ``results`` (atomic writes). Never the engine, pipeline or CLI. ``trl``, ``peft``,
``transformers`` and ``torch`` are imported only inside the functions that train.
"""
