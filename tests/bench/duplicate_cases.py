# ruff: noqa: E501, RUF001 - issue texts as trackers hold them: long lines, Chinese punctuation
"""The near-duplicate evaluation set: issues written the way the study's trackers get them, each in
its tracker's template, with the pairs a person would call duplicates and the hard pairs they
would not.

- DUPLICATES: re-worded re-reports, cross-posts between a GitHub tracker and its Gitee mirror,
  the same error reported in Chinese and in English, the same error pasted by another user.
- HARD_NEGATIVES: two different problems in the same template with the same environment, the same
  library failing in different ways, the same stack frames under different errors.
- filler(): distinct issues in the same templates (what a tracker mostly holds), so the template
  lines are learned as they would be, and any pair found among them is a false positive.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

MEGATRON = "github/NVIDIA/Megatron-LM"
TRANSFORMERS = "github/huggingface/transformers"
MINDNLP = "github/mindspore-lab/mindnlp"
MINDFORMERS = "gitee/mindspore/mindformers"
MINDNLP_GITEE = "gitee/mindspore/mindnlp"

TORCH_FRAMES = """Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 1518, in _wrapped_call_impl
    return self._call_impl(*args, **kwargs)
  File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 1527, in _call_impl
    return forward_call(*args, **kwargs)
  File "/workspace/megatron/core/transformer/transformer_block.py", line 411, in forward
    hidden_states = layer(hidden_states, attention_mask=attention_mask)"""

MS_FRAMES = """Traceback (most recent call last):
  File "/usr/local/python3.9/lib/python3.9/site-packages/mindspore/common/api.py", line 1620, in compile
    result = self._graph_executor.compile(obj, args, kwargs, phase, self._use_vm_mode())
  File "/usr/local/python3.9/lib/python3.9/site-packages/mindspore/nn/cell.py", line 983, in __call__
    out = self.compile_and_run(*args, **kwargs)
[ERROR] ME(12345:281472,MainProcess):2024-03-11-10:21:33.123.456 [mindspore/ccsrc/pipeline/jit/ps/action.cc:1024] check failed"""


def megatron(description: str, steps: str, log: str, env: str = "") -> str:
    return f"""**Describe the bug**
{description}

**To Reproduce**
{steps}

**Expected behavior**
A clear and concise description of what you expected to happen.

**Stack trace/logs**
```
{log}
```

**Environment (please complete the following information):**
 - Megatron-LM commit ID {env or "core_r0.6.0"}
 - PyTorch version 2.2.0
 - CUDA version 12.3
 - NCCL version 2.19.3

**Proposed fix**
If you have a proposal for how to fix the issue state it here or link to a PR.

**Additional context**
Add any other context about the problem here."""


def transformers(description: str, steps: str, log: str, env: str = "") -> str:
    return f"""### System Info

- `transformers` version: {env or "4.38.2"}
- Platform: Linux-5.15.0-91-generic-x86_64-with-glibc2.35
- Python version: 3.10.12
- PyTorch version (GPU?): 2.2.1+cu121 (True)

### Who can help?

@ArthurZucker @younesbelkada

### Information

- [ ] The official example scripts
- [x] My own modified scripts

### Tasks

- [ ] An officially supported task in the `examples` folder (such as GLUE/SQuAD, ...)
- [x] My own task or dataset (give details below)

### Reproduction

{description}

```python
{steps}
```

```
{log}
```

### Expected behavior

It should work."""


def mindformers(description: str, steps: str, log: str, env: str = "") -> str:
    return f"""<!-- 请按模板填写，便于我们快速定位问题 -->
【问题描述】
{description}

【环境】
- 硬件环境(Ascend/GPU/CPU): Ascend910B
- MindSpore版本: {env or "2.2.0"}
- 执行模式(PyNative/Graph): Graph
- Python版本: 3.9

【复现步骤】
{steps}

【日志信息】
```
{log}
```

【预期结果】
正常运行"""


def mindnlp(description: str, steps: str, log: str, env: str = "") -> str:
    return f"""**Describe the bug/ 问题描述 (Mandatory / 必填)**
{description}

- **Hardware Environment(`Ascend`/`GPU`/`CPU`) / 硬件环境**: Ascend
- **Software Environment / 软件环境 (Mandatory / 必填)**:
-- MindSpore version (e.g., 1.7.0.Bxxx) : {env or "2.2.14"}
-- Python version (e.g., Python 3.7.5) : 3.9
-- OS platform and distribution (e.g., Linux Ubuntu 16.04): EulerOS

**To Reproduce / 重现步骤 (Mandatory / 必填)**
{steps}

**Expected behavior / 预期结果 (Mandatory / 必填)**
No error.

**Screenshots/ 日志 / 截图 (Mandatory / 必填)**
```
{log}
```"""


TEMPLATES = {
    MEGATRON: megatron,
    TRANSFORMERS: transformers,
    MINDNLP: mindnlp,
    MINDFORMERS: mindformers,
    MINDNLP_GITEE: mindnlp,
}


@dataclass(frozen=True)
class Issue:
    tracker: str
    title: str
    description: str
    steps: str
    log: str
    env: str = ""

    @property
    def body(self) -> str:
        return TEMPLATES[self.tracker](self.description, self.steps, self.log, self.env)


def I(tracker, title, description, steps, log, env=""):  # noqa: E743 - short: a table of cases
    return Issue(tracker, title, description, steps, log, env)


DUPLICATES: list[tuple[Issue, Issue]] = [
    # re-worded re-reports
    (
        I(
            MEGATRON,
            "OOM with sequence parallel and --recompute-activations on 8xA100",
            "Training GPT 13B with tensor parallel 4 and sequence parallelism runs out of GPU memory "
            "at the first iteration even though activation recomputation is on.",
            "torchrun pretrain_gpt.py --tensor-model-parallel-size 4 --sequence-parallel "
            "--recompute-activations --micro-batch-size 4",
            TORCH_FRAMES + "\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "
            "2.50 GiB. GPU 0 has a total capacity of 79.15 GiB",
        ),
        I(
            MEGATRON,
            "CUDA out of memory at iteration 1 when sequence parallel is enabled",
            "With --sequence-parallel and TP=4 the 13B GPT model hits CUDA OOM right away; "
            "--recompute-activations does not help. Without sequence parallel it fits.",
            "pretrain_gpt.py with --sequence-parallel, --tensor-model-parallel-size 4, "
            "--recompute-activations, micro batch 4, 8 A100 80GB",
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB",
        ),
    ),
    (
        I(
            TRANSFORMERS,
            "LlamaTokenizer.from_pretrained hangs forever when legacy=False",
            "Loading the Llama 2 tokenizer with legacy=False never returns; CPU stays at 100%.",
            "tok = LlamaTokenizer.from_pretrained('meta-llama/Llama-2-7b-hf', legacy=False)",
            '^C KeyboardInterrupt\n  File "tokenization_llama.py", line 180, in get_spm_processor',
        ),
        I(
            TRANSFORMERS,
            "Llama-2 tokenizer loading stuck with legacy=False",
            "from_pretrained for LlamaTokenizer with legacy=False gets stuck in get_spm_processor "
            "and I have to kill it. legacy=True loads in a second.",
            "LlamaTokenizer.from_pretrained(path, legacy=False)",
            "KeyboardInterrupt in get_spm_processor",
        ),
    ),
    (
        I(
            TRANSFORMERS,
            "generate() ignores max_new_tokens when a GenerationConfig is passed",
            "When I pass generation_config=GenerationConfig(...) and also max_new_tokens=20, the "
            "output is as long as the config's max_length, max_new_tokens is silently ignored.",
            "model.generate(**inputs, generation_config=cfg, max_new_tokens=20)",
            "output length 200 tokens",
        ),
        I(
            TRANSFORMERS,
            "max_new_tokens has no effect if generation_config is given to generate",
            "Passing both a GenerationConfig and the max_new_tokens kwarg: generate produces "
            "max_length tokens, the kwarg is dropped without a warning.",
            "out = model.generate(input_ids, generation_config=gen_cfg, max_new_tokens=20)",
            "len(out[0]) == 200",
        ),
    ),
    (
        I(
            MEGATRON,
            "Checkpoint conversion to HF fails: KeyError 'language_model.embedding'",
            "tools/checkpoint/convert.py with --saver hf fails on a checkpoint trained with "
            "the mcore models.",
            "python tools/checkpoint/convert.py --model-type GPT --loader mcore --saver hf",
            "KeyError: 'language_model.embedding.word_embeddings.weight'",
        ),
        I(
            MEGATRON,
            "convert.py mcore loader -> HF saver: KeyError on word_embeddings",
            "Converting an mcore GPT checkpoint to Hugging Face format crashes with a KeyError for "
            "the word embeddings key.",
            "convert.py --loader mcore --saver hf --load-dir ckpt --save-dir hf_out",
            "KeyError: 'language_model.embedding.word_embeddings.weight'",
        ),
    ),
    (
        I(
            MINDFORMERS,
            "llama2_7b 微调时 loss 为 nan",
            "使用 run_mindformer.py 微调 llama2_7b，开启 bf16 后第 20 步开始 loss 变成 nan。",
            "python run_mindformer.py --config configs/llama2/finetune_llama2_7b.yaml --run_mode finetune",
            "epoch: 1 step: 20, loss is nan\nepoch: 1 step: 21, loss is nan",
        ),
        I(
            MINDFORMERS,
            "llama2 7b finetune bf16 loss 变为 nan",
            "bf16 下 llama2_7b 的微调任务 loss 在二十步左右变成 nan，fp16 正常。",
            "run_mindformer.py --run_mode finetune --config finetune_llama2_7b.yaml",
            "step: 20, loss is nan",
        ),
    ),
    (
        I(
            MINDFORMERS,
            "glm2_6b 推理报错 Tensor shape mismatch",
            "glm2_6b 使用 text_generator 推理时报错，提示 shape 不匹配。",
            "python run_mindformer.py --config configs/glm2/run_glm2_6b.yaml --run_mode predict",
            MS_FRAMES + "\nValueError: For 'MatMul', the input dimensions must be equal, but got "
            "'x1_col': 4096 and 'x2_row': 2048.",
        ),
        I(
            MINDFORMERS,
            "glm2 6b predict 模式 MatMul 维度不一致",
            "predict 模式下 glm2_6b 报 MatMul 维度错误，x1_col 4096 与 x2_row 2048 不一致。",
            "run_mode predict, config run_glm2_6b.yaml",
            "ValueError: For 'MatMul', the input dimensions must be equal, but got 'x1_col': 4096 "
            "and 'x2_row': 2048.",
        ),
    ),
    # cross-posts: GitHub tracker and its Gitee mirror
    (
        I(
            MINDNLP,
            "BertModel.from_pretrained fails: safetensors file not found",
            "Loading bert-base-uncased with mindnlp raises an OSError because it looks for "
            "model.safetensors which the mirror does not have.",
            "from mindnlp.transformers import BertModel\nBertModel.from_pretrained('bert-base-uncased')",
            "OSError: bert-base-uncased does not appear to have a file named model.safetensors",
        ),
        I(
            MINDNLP_GITEE,
            "BertModel.from_pretrained fails: safetensors file not found",
            "Loading bert-base-uncased with mindnlp raises an OSError because it looks for "
            "model.safetensors which the mirror does not have. (same as the GitHub issue)",
            "from mindnlp.transformers import BertModel\nBertModel.from_pretrained('bert-base-uncased')",
            "OSError: bert-base-uncased does not appear to have a file named model.safetensors",
        ),
    ),
    (
        I(
            MINDNLP,
            "Qwen2 generate is 10x slower than on GPU on Ascend 910B",
            "Generating 128 tokens with Qwen2-7B-Instruct takes 60 s on one 910B, against 6 s on "
            "an A100 with PyTorch.",
            "model.generate(input_ids, max_new_tokens=128)",
            "time: 61.3s",
        ),
        I(
            MINDNLP_GITEE,
            "Qwen2-7B 在 910B 上 generate 速度很慢",
            "Qwen2-7B-Instruct generate 128 tokens on 910B takes about 60 seconds, 10x slower than "
            "PyTorch on A100.",
            "model.generate(input_ids, max_new_tokens=128)",
            "time: 60.8s",
        ),
    ),
    (
        I(
            MINDNLP,
            "AutoTokenizer.from_pretrained downloads from huggingface.co instead of mirror",
            "HF_ENDPOINT is ignored; AutoTokenizer tries huggingface.co and times out behind the "
            "firewall.",
            "AutoTokenizer.from_pretrained('Qwen/Qwen2-7B', mirror='modelscope')",
            "requests.exceptions.ConnectTimeout: HTTPSConnectionPool(host='huggingface.co', port=443)",
        ),
        I(
            MINDNLP_GITEE,
            "AutoTokenizer 下载时不走镜像，连接 huggingface.co 超时",
            "设置 mirror='modelscope' 后 AutoTokenizer.from_pretrained 仍然连接 huggingface.co 然后超时。",
            "AutoTokenizer.from_pretrained('Qwen/Qwen2-7B', mirror='modelscope')",
            "requests.exceptions.ConnectTimeout: HTTPSConnectionPool(host='huggingface.co', port=443)",
        ),
    ),
    # Chinese / English pairs on the same error
    (
        I(
            MINDFORMERS,
            "多卡训练 HCCL 初始化超时",
            "8 卡分布式训练在初始化通信时卡住，最后报 HCCL 超时错误。",
            "msrun --worker_num=8 run_mindformer.py --config pretrain_llama2_7b.yaml",
            "RuntimeError: Call aclrtSetDevice failed, HCCL init timeout, "
            "EI0006: Getting socket times out. Reason: connection timed out",
        ),
        I(
            MEGATRON,
            "HCCL init timeout on 8 NPUs with the Ascend backend",
            "Distributed training on 8 Ascend NPUs hangs at communicator initialization and then "
            "fails with an HCCL timeout.",
            "torchrun --nproc_per_node 8 pretrain_gpt.py (torch_npu backend)",
            "RuntimeError: HCCL init timeout, EI0006: Getting socket times out. "
            "Reason: connection timed out",
        ),
    ),
    (
        I(
            MINDFORMERS,
            "加载 checkpoint 报错 Failed to read the checkpoint file",
            "使用 load_checkpoint 加载转换后的 ckpt 时报错，文件可能损坏。",
            "load_checkpoint('llama2_7b.ckpt')",
            "ValueError: Failed to read the checkpoint file llama2_7b.ckpt, may not have "
            "permission to read it or the file is damaged.",
        ),
        I(
            MINDNLP,
            "load_checkpoint: Failed to read the checkpoint file, file is damaged",
            "After converting a PyTorch checkpoint, mindspore.load_checkpoint refuses it and says "
            "the file may be damaged.",
            "mindspore.load_checkpoint('llama2_7b.ckpt')",
            "ValueError: Failed to read the checkpoint file llama2_7b.ckpt, may not have "
            "permission to read it or the file is damaged.",
        ),
    ),
    (
        I(
            MINDFORMERS,
            "显存不足：Out of Memory 申请内存失败",
            "qwen1.5 14b 在 4 卡上训练，第一步就报显存不足，device memory 申请失败。",
            "msrun --worker_num=4 run_mindformer.py --config finetune_qwen1_5_14b.yaml",
            "RuntimeError: Out of Memory!!! Request memory size: 3221225472B, Memory "
            "Statistic: Device HBM memory size: 65536M",
        ),
        I(
            MINDNLP,
            "Out of Memory when finetuning Qwen1.5-14B on 4 NPUs",
            "Finetuning Qwen1.5 14B on 4 Ascend cards fails at the first step: device memory "
            "request fails.",
            "run finetune script with 4 workers",
            "RuntimeError: Out of Memory!!! Request memory size: 3221225472B, Memory "
            "Statistic: Device HBM memory size: 65536M",
        ),
    ),
    (
        I(
            MINDFORMERS,
            "pip 安装 mindformers 后 import 报错 No module named 'mindformers.tools'",
            "通过 pip 安装 mindformers 1.0 之后 import 失败。",
            "pip install mindformers==1.0.0; python -c 'import mindformers'",
            "ModuleNotFoundError: No module named 'mindformers.tools'",
        ),
        I(
            MINDNLP,
            "import mindformers fails: No module named 'mindformers.tools'",
            "Installed mindformers 1.0.0 from pip and importing it fails right away.",
            "pip install mindformers==1.0.0 && python -c 'import mindformers'",
            "ModuleNotFoundError: No module named 'mindformers.tools'",
        ),
    ),
    # the same error pasted by another user, with their own words around it
    (
        I(
            TRANSFORMERS,
            "ValueError: Attempting to unscale FP16 gradients with Trainer and LoRA",
            "Training a LoRA adapter with fp16=True in Trainer crashes in the optimizer step.",
            "trainer = Trainer(model=peft_model, args=TrainingArguments(fp16=True))\ntrainer.train()",
            "ValueError: Attempting to unscale FP16 gradients.",
        ),
        I(
            TRANSFORMERS,
            "Trainer fp16 + peft LoRA: Attempting to unscale FP16 gradients",
            "Same error as others: fp16=True with a peft LoRA model in the Trainer, crash at the "
            "first optimizer step.",
            "TrainingArguments(fp16=True, per_device_train_batch_size=4) with get_peft_model",
            "ValueError: Attempting to unscale FP16 gradients.",
        ),
    ),
    (
        I(
            MEGATRON,
            "NCCL error: unhandled system error in all_reduce with 2 nodes",
            "Multi-node run on two nodes with InfiniBand fails in the first all_reduce.",
            "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py",
            TORCH_FRAMES + "\ntorch.distributed.DistBackendError: NCCL error in: "
            "ProcessGroupNCCL.cpp:1691, unhandled system error, NCCL version 2.19.3",
        ),
        I(
            MEGATRON,
            "DistBackendError unhandled system error on multi-node all_reduce",
            "Two-node job dies at the first all_reduce; single node is fine. IB devices look ok.",
            "2 nodes x 8 GPUs, torchrun pretrain_gpt.py",
            "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1691, "
            "unhandled system error, NCCL version 2.19.3",
        ),
    ),
    (
        I(
            TRANSFORMERS,
            "Whisper pipeline: return_timestamps=True raises IndexError on long audio",
            "Chunked long-form transcription with timestamps fails on a 30 minute file.",
            "pipe = pipeline('automatic-speech-recognition', model='openai/whisper-large-v3', "
            "chunk_length_s=30)\npipe(audio, return_timestamps=True)",
            "IndexError: index 0 is out of bounds for axis 0 with size 0",
        ),
        I(
            TRANSFORMERS,
            "IndexError index 0 is out of bounds with whisper-large-v3 timestamps",
            "Long audio (about 25 min) transcribed with chunk_length_s=30 and "
            "return_timestamps=True throws IndexError.",
            "pipeline('automatic-speech-recognition', 'openai/whisper-large-v3', "
            "chunk_length_s=30)(f, return_timestamps=True)",
            "IndexError: index 0 is out of bounds for axis 0 with size 0",
        ),
    ),
    (
        I(
            MINDNLP,
            "GPT2 training loss does not decrease in PyNative mode",
            "Fine-tuning GPT2 on wikitext in PyNative mode: the loss stays at 10.8 for 2000 "
            "steps; in Graph mode it goes down.",
            "context.set_context(mode=PYNATIVE_MODE); trainer.train()",
            "step 2000 loss 10.83",
        ),
        I(
            MINDNLP_GITEE,
            "PyNative 模式下 GPT2 训练 loss 不下降",
            "GPT2 在 wikitext 上微调，PyNative 模式 loss 一直是 10.8 左右不下降，Graph 模式正常。",
            "set_context(mode=PYNATIVE_MODE) trainer.train()",
            "step 2000 loss 10.81",
        ),
    ),
    (
        I(
            MEGATRON,
            "Pipeline parallel with interleaved schedule deadlocks with virtual stages 2",
            "--num-layers-per-virtual-pipeline-stage with PP=4 hangs forever at the first "
            "iteration: no error, GPUs at 100%.",
            "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2",
            "(no output after 'training ...')",
        ),
        I(
            MEGATRON,
            "Interleaved pipeline schedule hangs (PP=4, virtual pipeline stage)",
            "Training hangs at iteration 0 when the interleaved 1F1B schedule is used with "
            "4 pipeline stages and 2 layers per virtual stage.",
            "pipeline-model-parallel-size 4, num-layers-per-virtual-pipeline-stage 2",
            "hangs after 'training ...'",
        ),
    ),
]

HARD_NEGATIVES: list[tuple[Issue, Issue]] = [
    # same library, different failures
    (
        I(
            MEGATRON,
            "CUDA out of memory during checkpoint saving with distributed optimizer",
            "Saving a checkpoint with --use-distributed-optimizer allocates a full copy of the "
            "optimizer state on rank 0 and runs out of memory.",
            "--use-distributed-optimizer --save-interval 1000",
            TORCH_FRAMES + "\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "
            "12.00 GiB during save_checkpoint",
        ),
        I(
            MEGATRON,
            "Loss spikes after resuming from checkpoint with distributed optimizer",
            "After resuming from a saved checkpoint with --use-distributed-optimizer, the loss "
            "jumps from 2.1 to 7.5 and slowly recovers.",
            "--use-distributed-optimizer --load ckpt",
            "iteration 1001 | lm loss: 7.51",
        ),
    ),
    (
        I(
            TRANSFORMERS,
            "LlamaTokenizer adds two BOS tokens when add_special_tokens=True",
            "The Llama tokenizer prepends <s> twice if the chat template already has it.",
            "tok.apply_chat_template(msgs); tok(text, add_special_tokens=True)",
            "[1, 1, 518, 25580]",
        ),
        I(
            TRANSFORMERS,
            "LlamaTokenizerFast decode drops leading spaces",
            "Decoding with the fast Llama tokenizer removes the leading space of the first word.",
            "tok.decode(tok.encode(' Hello'))",
            "'Hello' != ' Hello'",
        ),
    ),
    (
        I(
            MINDFORMERS,
            "llama2_7b 微调 loss 不下降",
            "llama2_7b 微调 3 个 epoch，loss 一直在 2.3 左右不下降，学习率 1e-5。",
            "run_mindformer.py --run_mode finetune --config finetune_llama2_7b.yaml",
            "epoch: 3 step: 900, loss is 2.31",
        ),
        I(
            MINDFORMERS,
            "llama2_7b 推理输出重复",
            "llama2_7b 推理时输出一直重复同一句话，设置 repetition_penalty 无效。",
            "run_mindformer.py --run_mode predict --config predict_llama2_7b.yaml",
            "输出：你好你好你好你好",
        ),
    ),
    (
        I(
            MINDFORMERS,
            "glm3_6b 训练保存 ckpt 报错 No space left on device",
            "glm3_6b 训练时保存 ckpt 报错，提示磁盘空间不足。",
            "python run_mindformer.py --config configs/glm3/run_glm3_6b.yaml --run_mode train",
            MS_FRAMES + "\nOSError: [Errno 28] No space left on device",
        ),
        I(
            MINDFORMERS,
            "baichuan2 13b 评测报错 KeyError",
            "baichuan2_13b 在 ceval 上评测时报 KeyError。",
            "python run_mindformer.py --config run_baichuan2_13b.yaml --run_mode eval",
            MS_FRAMES + "\nKeyError: 'input_ids'",
        ),
    ),
    # same template and environment, different problems
    (
        I(
            MINDNLP,
            "ChatGLM3 tokenizer decode returns garbled Chinese characters",
            "Decoding ChatGLM3 outputs gives mojibake for Chinese text.",
            "tokenizer.decode(output_ids)",
            "'ä½ å¥½'",
        ),
        I(
            MINDNLP,
            "ChatGLM3 generate raises TypeError about past_key_values",
            "model.generate with use_cache=True fails in the attention layer.",
            "model.generate(input_ids, use_cache=True)",
            "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
        ),
    ),
    (
        I(
            TRANSFORMERS,
            "Trainer resumes from checkpoint but skips the wrong number of batches",
            "resume_from_checkpoint=True with gradient accumulation 4 skips 4x too many batches.",
            "trainer.train(resume_from_checkpoint=True)",
            "Skipping the first 4000 batches",
        ),
        I(
            TRANSFORMERS,
            "Trainer with gradient accumulation logs a loss 4x too large",
            "With gradient_accumulation_steps=4 the logged loss is four times the real loss.",
            "TrainingArguments(gradient_accumulation_steps=4)",
            "{'loss': 8.42}",
        ),
    ),
    (
        I(
            MEGATRON,
            "NCCL timeout in all_gather during evaluation",
            "Evaluation at iteration 2000 hangs in all_gather and then the watchdog kills it.",
            "--eval-interval 2000 --eval-iters 10",
            TORCH_FRAMES + "\n[Rank 3] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=8812, OpType=ALLGATHER, Timeout(ms)=600000)",
        ),
        I(
            MEGATRON,
            "NCCL version mismatch warning with PyTorch 2.2 container",
            "Starting any job prints a NCCL version mismatch warning between the container and "
            "the PyTorch build; training still runs.",
            "torchrun pretrain_gpt.py",
            "NCCL WARN NCCL version mismatch: 2.19.3 vs 2.18.1",
        ),
    ),
    (
        I(
            TRANSFORMERS,
            "AutoModelForCausalLM.from_pretrained: torch_dtype='auto' loads in float32",
            "Loading Mistral-7B with torch_dtype='auto' gives float32 weights, the config says "
            "bfloat16.",
            "AutoModelForCausalLM.from_pretrained('mistralai/Mistral-7B-v0.1', torch_dtype='auto')",
            "model.dtype == torch.float32",
        ),
        I(
            TRANSFORMERS,
            "AutoModelForCausalLM.from_pretrained with device_map='auto' ignores max_memory",
            "Mistral-7B is put entirely on GPU 0 although max_memory limits it to 10GiB.",
            "from_pretrained('mistralai/Mistral-7B-v0.1', device_map='auto', max_memory={0: '10GiB'})",
            "torch.cuda.OutOfMemoryError: CUDA out of memory.",
        ),
    ),
    (
        I(
            MINDNLP,
            "Qwen2 generate is slow on Ascend 910B in PyNative mode",
            "PyNative generate for Qwen2-1.5B takes 2 s per token.",
            "model.generate(input_ids, max_new_tokens=32)",
            "2.1 s/token",
        ),
        I(
            MINDNLP,
            "Qwen2 generate returns empty string on Ascend 910B",
            "Qwen2-1.5B-Instruct generate output decodes to an empty string with the chat "
            "template.",
            "tokenizer.apply_chat_template(msgs); model.generate(ids)",
            "''",
        ),
    ),
    (
        I(
            MINDFORMERS,
            "8 卡训练保存 checkpoint 时 HCCL 报错 EI0002",
            "8 卡训练保存 checkpoint 时报 HCCL 通信错误 EI0002。",
            "msrun --worker_num=8 run_mindformer.py --config pretrain_llama2_7b.yaml",
            "RuntimeError: EI0002: The wait execution of the Notify register times out.",
        ),
        I(
            MINDFORMERS,
            "多卡训练 rank table 文件格式错误",
            "使用 rank_table_8pcs.json 启动 8 卡训练报 rank table 解析错误。",
            "bash run_distribute.sh rank_table_8pcs.json",
            "ValueError: rank table file hccl_8p.json is not a valid json",
        ),
    ),
    (
        I(
            MEGATRON,
            "Flash attention import error with transformer engine 1.4",
            "Importing megatron.core with TE 1.4 fails because flash_attn is missing a symbol.",
            "python -c 'import megatron.core'",
            "ImportError: flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol",
        ),
        I(
            MEGATRON,
            "Transformer engine fp8 training diverges with delayed scaling",
            "FP8 with --fp8-format hybrid diverges after 3000 iterations.",
            "--fp8-format hybrid --transformer-impl transformer_engine",
            "iteration 3000 | lm loss: nan",
        ),
    ),
    (
        I(
            MINDNLP,
            "load_checkpoint: parameter shapes do not match for embedding",
            "Loading a converted checkpoint: shape of word_embeddings differs from the model.",
            "mindspore.load_checkpoint('bert.ckpt', net)",
            "RuntimeError: For 'load_param_into_net', word_embeddings.weight in the argument "
            "'net' should have the same shape as in the argument 'parameter_dict'",
        ),
        I(
            MINDNLP,
            "load_checkpoint is very slow for 7B checkpoints",
            "Loading a 14 GB checkpoint with load_checkpoint takes 8 minutes.",
            "mindspore.load_checkpoint('llama2_7b.ckpt')",
            "elapsed 481 s",
        ),
    ),
]

# Distinct issues for the trackers' ordinary traffic: a model, what was being done with it, what went
# wrong, and two details of the reporter's own; no two share both model and task.
_SUBJECTS = [
    "Llama-2-13B",
    "Mixtral-8x7B",
    "Baichuan2-7B",
    "ChatGLM3-6B",
    "Qwen1.5-32B",
    "InternLM2-20B",
    "BLOOM-7B1",
    "Falcon-40B",
    "Yi-34B",
    "Gemma-7B",
    "T5-large",
    "ViT-huge",
    "CLIP-ViT-L-14",
    "SDXL-base",
    "wav2vec2-large",
    "DeepSeek-V2-Lite",
    "Phi-3-mini",
    "OPT-6.7B",
    "GPT-NeoX-20B",
    "StarCoder2-15B",
    "CodeLlama-34B",
    "Mamba-2.8B",
    "RWKV-6",
    "Pangu-alpha",
    "BERT-large",
    "RoBERTa-base",
    "Whisper-medium",
    "BLIP-2",
    "LLaVA-1.5",
    "Swin-B",
    "XLM-R",
    "MiniCPM-2B",
]
_ACTIONS = [
    ("exporting it to ONNX", "导出 ONNX"),
    ("running LoRA finetuning", "LoRA 微调"),
    ("evaluating on MMLU", "MMLU 评测"),
    ("running int8 quantization", "int8 量化"),
    ("serving it with vLLM", "vLLM 部署"),
    ("enabling gradient checkpointing", "开启重计算"),
    ("converting the checkpoint from safetensors", "safetensors 权重转换"),
    ("training with ZeRO stage 3", "ZeRO3 训练"),
    ("running beam search with 4 beams", "beam search 推理"),
    ("using the streaming dataset loader", "流式数据集加载"),
    ("compiling with torch.compile", "torch.compile 编译"),
    ("pruning attention heads", "注意力头剪枝"),
    ("distilling into a smaller student", "蒸馏小模型"),
    ("running on CPU only", "纯 CPU 运行"),
    ("merging the adapter weights", "合并 adapter 权重"),
    ("resizing the token embeddings", "扩充词表"),
]
_FAILURES = [
    ("the process segfaults", "Segmentation fault (core dumped)"),
    ("every output is zero", "tensor([[0., 0., 0.]])"),
    ("a BFloat16 dtype error is raised", "TypeError: expected Float but got BFloat16"),
    ("nothing happens for an hour", "no progress for 60 minutes"),
    ("MMLU accuracy drops by 20 points", "acc 0.41 vs 0.62 reported"),
    ("a file permission error appears", "PermissionError: [Errno 13] Permission denied"),
    ("the server returns HTTP 500", "500 Internal Server Error"),
    ("the tokenizer warns about unknown tokens", "Token indices sequence length is longer"),
    ("the shapes do not match", "RuntimeError: shape '[4, 4096]' is invalid for input of size"),
    ("a recursion limit is hit", "RecursionError: maximum recursion depth exceeded"),
]
_DETAILS = [
    "It worked with the previous release.",
    "I tried two different machines.",
    "Only the first rank fails.",
    "The same script is fine with a smaller batch.",
    "Reinstalling the wheel did not change anything.",
    "The docs do not mention this case.",
    "My dataset has very long documents.",
    "I am using a docker image from last week.",
    "Setting the seed does not make it reproducible.",
    "The warning appears twice in the log.",
    "Downgrading numpy made no difference.",
    "It happens in both eager and graph mode.",
    "We run behind a proxy without internet access.",
    "Our cluster uses Slurm with 4 nodes.",
    "The memory usage grows slowly before it happens.",
    "I attached the config file below.",
]


def filler(count: int, seed: int = 7) -> list[Issue]:
    """`count` distinct ordinary issues spread over the trackers, each in its template."""
    rng = random.Random(seed)
    combos = list(itertools.product(_SUBJECTS, _ACTIONS))
    rng.shuffle(combos)
    trackers = list(TEMPLATES)
    out = []
    for n, (subject, (action, action_zh)) in enumerate(combos[:count]):
        failure, log = rng.choice(_FAILURES)
        details = " ".join(rng.sample(_DETAILS, 2))
        tracker = trackers[n % len(trackers)]
        if tracker.startswith("gitee"):
            title = f"{subject} {action_zh}时出错：{log[:30]}"
            description = f"{subject} 在{action_zh}时出现问题：{failure}。{details}"
        else:
            title = f"{subject}: {failure} when {action}"
            description = f"When {action} with {subject}, {failure}. {details}"
        out.append(I(tracker, title, description, f"run the {action} script for {subject}", log))
    return out
