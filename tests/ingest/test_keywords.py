"""Keyword matching rules, and the study's filter_keywords file."""

import pytest

from ingest.keywords import KeywordMatcher, parse_filter_keywords
from tests.conftest import STUDY

KEYWORDS = ["yi", "llama", "gpt", "large language model", "opt", "T5", "LLM", "ChatGPT"]
MATCHER = KeywordMatcher(KEYWORDS)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("we yield the value", []),
        ("Yi-34B fails to load", ["yi"]),
        ("Llama2 runs out of memory", ["llama"]),
        ("several llamas", ["llama"]),
        ("GPT-4 works, chatgpt too", ["gpt", "ChatGPT"]),
        ("a large  language\nmodel", ["large language model"]),
        ("option parsing", []),
        ("opt-125m", ["opt"]),
        ("t5x is different", []),
        ("LLMs are big", ["LLM"]),
        ("", []),
    ],
)
def test_whole_words_case_insensitive_with_versions_and_plurals(text, found):
    assert MATCHER.found(text) == found


def test_study_keyword_file_gives_one_set_per_framework_without_repeats():
    sets = parse_filter_keywords((STUDY / "filter_keywords").read_text())
    assert set(sets) == {"tensorflow", "mindspore", "pytorch"}
    for keywords in sets.values():
        lowered = [k.lower() for k in keywords]
        assert len(lowered) == len(set(lowered))
    assert "large language model" in sets["tensorflow"]


def test_keyword_file_is_parsed_not_executed():
    sets = parse_filter_keywords("import os\nx_keywords = ['a', 'b', 'A']\nos.system('true')\n")
    assert sets == {"x": ["a", "b"]}


def test_empty_set_matches_nothing():
    assert KeywordMatcher([]).found("llama") == []
    assert KeywordMatcher(["  ", ""]).hits("llama") == []


# Chinese and mixed text (issue 13): what the study's Gitee trackers (MindSpore, MindSpeed,
# mindformers) write, and identifiers as people paste them.
FULL_WIDTH_LLAMA = "\uff2c\uff2c\uff41\uff2d\uff21"  # LLaMA typed with a Chinese input method
MIXED = [
    "deepspeed",
    "llama",
    "MindFormers",
    "Qwen",
    "910B",
    "lora",
    "vLLM engine",
    "vLLM",
    "OPT",
    "微调",
    "昇腾",
    "大模型",
]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("使用deepspeed训练时报错", ["deepspeed"]),  # English next to Chinese
        ("基于llama的微调", ["llama", "微调"]),  # a Chinese keyword is a substring
        ("MindFormers接口报错", ["MindFormers"]),
        ("昇腾910B上运行Qwen2失败", ["Qwen", "910B", "昇腾"]),
        ("model = LlamaForCausalLM.from_pretrained(path)", ["llama"]),  # a CamelCase hump
        ("peft_config = LoraConfig(r=8)", ["lora"]),
        (
            FULL_WIDTH_LLAMA + " 推理很慢",
            ["llama"],
        ),  # full-width letters from a Chinese input method
        ("the vLLM engine hangs", ["vLLM engine", "vLLM"]),  # overlapping: both recorded
        ("vLLM  engine\nstops", ["vLLM engine", "vLLM"]),
        ("set fp16_opt_level to O2", []),  # inside an identifier: not OPT
        ("OPT-13B 跑不起来", ["OPT"]),
        ("大模型训练", ["大模型"]),
        ("lorax and deepspeedy", []),  # still whole words in Latin script
        ("llamas 与 Qwens", ["llama", "Qwen"]),
        ("", []),
    ],
)
def test_chinese_and_mixed_text(text, found):
    assert KeywordMatcher(MIXED).found(text) == found


def test_every_hit_says_where_and_why_in_the_text_as_given():
    text = "\uff2c\uff2c\uff41\uff2d\uff21的微调, llamas"  # full-width LLaMA
    hits = KeywordMatcher(["llama", "微调"]).hits(text)
    assert [(text[h.start : h.end], h.keyword, h.why) for h in hits] == [
        (FULL_WIDTH_LLAMA, "llama", "a whole word"),
        ("微调", "微调", "a Chinese term: matched anywhere"),
        ("llamas", "llama", "a word in the plural"),
    ]


def test_positions_survive_characters_that_normalise_to_several():
    text = "ﬁne-tune ㎏ Llama"  # the ligature becomes "fi", the unit "kg"
    (hit,) = KeywordMatcher(["llama"]).hits(text)
    assert text[hit.start : hit.end] == "Llama"
    assert KeywordMatcher(["fine-tune"]).found(text) == ["fine-tune"]


def test_a_set_keeps_one_spelling_of_a_keyword_in_any_width_or_case():
    assert KeywordMatcher(["LLaMA", "llama", FULL_WIDTH_LLAMA, "微调"]).keywords == [
        "LLaMA",
        "微调",
    ]


def test_import_keywords_command_creates_one_set_per_framework(db, capsys):
    from django.core.management import call_command

    from ingest.models import KeywordSet

    call_command("import_keywords", str(STUDY / "filter_keywords"))
    assert set(KeywordSet.objects.values_list("name", flat=True)) == {
        "tensorflow",
        "mindspore",
        "pytorch",
    }
    call_command("import_keywords", str(STUDY / "filter_keywords"))  # again: same sets
    assert KeywordSet.objects.count() == 3
    assert "keyword set 'pytorch'" in capsys.readouterr().out


def test_editing_a_set_re_marks_its_sources_issues(db):
    from datetime import date

    from ingest.candidates import keyword_set_save
    from ingest.models import KeywordMatch, Source
    from tests.factories import IssueFactory

    keywords = keyword_set_save(name="pytorch", keywords=["llama"])
    source = Source.objects.create(
        host="github",
        owner="NVIDIA",
        repo="Megatron-LM",
        created_from=date(2023, 1, 1),
        created_until=date(2025, 4, 30),
        keyword_set=keywords,
    )
    issue = IssueFactory(
        title="Loss spikes with bf16", body="quantization of Llama-2", source=source
    )
    keyword_set_save(name="pytorch", keywords=["quantization"])
    assert KeywordMatch.objects.get(issue=issue).keywords == ["quantization"]
    keyword_set_save(name="pytorch", keywords=["mixtral"])
    assert not KeywordMatch.objects.filter(issue=issue).exists()


def test_a_set_can_be_renamed_and_its_description_cleared(db):
    from ingest.candidates import keyword_set_save

    original = keyword_set_save(name="torch", keywords=["llm"], description="first draft")
    renamed = keyword_set_save(
        name="pytorch", keywords=["llm"], description="", keyword_set=original
    )
    assert renamed.pk == original.pk
    assert (renamed.name, renamed.description) == ("pytorch", "")
    again = keyword_set_save(name="pytorch", keywords=["llm", "gpt"])  # by name, text kept
    assert (again.pk, again.keywords, again.description) == (original.pk, ["llm", "gpt"], "")


def test_a_keyword_file_error_names_the_file_and_line():
    from concord.errors import ConcordError

    with pytest.raises(ConcordError, match=r"kw\.py, line 3: vllm_keywords may hold only"):
        parse_filter_keywords("vllm_keywords = [\n  'a',\n  print('b'),\n]\n", "kw.py")
    with pytest.raises(ConcordError, match=r"kw\.py: no `<framework>_keywords"):
        parse_filter_keywords("x = 1\n", "kw.py")


# ---------------------------------------------------------------- the preview page


def test_the_preview_shows_each_match_where_and_why_and_escapes_the_text(client, staff):
    from ingest.models import KeywordSet

    keyword_set = KeywordSet.objects.create(name="mindspore", keywords=["llama", "微调", "OPT"])
    client.force_login(staff)
    url = f"/ingest/keyword-sets/{keyword_set.pk}/preview/"
    assert client.get(url).status_code == 200

    text = "<script>x</script> 基于LlamaForCausalLM的微调, fp16_opt_level=O2"
    response = client.post(url, {"text": text})

    page = response.content.decode()
    assert response.status_code == 200
    assert "A candidate: llama, 微调" in page
    assert '<td>llama</td><td><mark class="kw">Llama</mark></td>' in page
    assert "a Chinese term: matched anywhere" in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page
    assert "<script>x</script>" not in page
    assert '<mark class="kw">微调</mark>, fp16_opt_level' in page  # OPT inside an identifier: no


def test_the_preview_says_when_nothing_matches_and_refuses_bad_text(client, staff):
    from ingest.models import KeywordSet

    keyword_set = KeywordSet.objects.create(name="t", keywords=["llama"])
    client.force_login(staff)
    url = f"/ingest/keyword-sets/{keyword_set.pk}/preview/"
    assert "Not a candidate" in client.post(url, {"text": "yield"}).content.decode()
    refused = client.post(url, {"text": "a\x00b"})
    assert refused.status_code == 400
    assert "contains a NUL character" in refused.content.decode()
    too_long = client.post(url, {"text": "llama " * 20_000}).content.decode()
    assert "at most 100000 characters" in too_long
    assert 'id="verdict"' not in too_long


# Rules decided after measuring on texts we did not write (issue 30): hyphenated phrases, names
# inside identifiers, a hump after a digit, and everyday words that the set writes as names.
STUDY_LIKE = [
    "few shot",
    "large language model",
    "deepseek",
    "gpt",
    "gpt-neox",
    "lora",
    "T5",
    "ZeRO",
    "OPT",
    "BLOOM",
    "fp16",
    "attention_mask",
    "torch.distributed",
]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("few-shot prompting fails", ["few shot"]),  # a phrase across hyphens
        ("run the few_shot eval", ["few shot"]),  # ... and underscores
        ("is a large-language-model served here", ["large language model"]),
        ("fewshot", []),  # but its words are still words
        ("from deepseek_v3 import Model", ["deepseek"]),  # names inside identifiers
        ("transformers.models.gpt_neox.modeling", ["gpt", "gpt-neox"]),
        ("lora_A and lora_B are not merged", ["lora"]),
        ("use_deepspeed_zero3=True", []),  # zero written in lowercase: the word, not ZeRO
        ("tok = T5Tokenizer.from_pretrained(name)", ["T5"]),  # a hump after a digit
        ("t5x is different", []),
        ("ZeroDivisionError: zero division", []),  # everyday words the set writes as names
        ("ZeRO stage 3 hangs", ["ZeRO"]),
        ("pip install opt-einsum", []),
        ("OPT-13B and facebook/OPT-350m", ["OPT"]),
        ("a bloom filter", []),
        ("BLOOM-176B", ["BLOOM"]),
        ("set fp16_opt_level to O2", ["fp16"]),  # fp16 is its own word in the identifier
        ("pass attention mask explicitly", ["attention_mask"]),  # the set's underscore too
        ("torch.distributed.init_process_group", ["torch.distributed"]),
    ],
)
def test_phrases_identifiers_and_everyday_words(text, found):
    assert KeywordMatcher(STUDY_LIKE).found(text) == found


def test_a_keyword_keeps_its_case_only_when_an_everyday_word_is_written_as_a_name():
    assert KeywordMatcher(["opt"]).found("opt-einsum") == ["opt"]  # lowercase: any case
    assert KeywordMatcher(["Zero"]).found("zero division") == ["Zero"]  # a capital first only
    assert KeywordMatcher(["vLLM"]).found("pip install vllm") == ["vLLM"]  # not an everyday word
