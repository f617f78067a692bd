"""The fine-tuning readers on small files written here: CoNLL, CoNLL-U, CSV/TSV/JSONL, SQuAD,
and every error they raise naming the file (and the line, when it is about one)."""
from __future__ import annotations

import json

import pytest

from trainer.finetune.readers import (
    FinetuneDataError,
    TaggedSentence,
    check_iob_tags,
    check_labels,
    is_iob_tagging,
    read_classification,
    read_conll,
    read_conllu,
    read_squad,
    read_tagging,
    require_entity_tags,
    to_iob2,
)


def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def raises_at(path, line=None, match=""):
    """The error names `path` (and `line`) at its start, and is one line."""
    class Check:
        def __enter__(self):
            self.ctx = pytest.raises(FinetuneDataError, match=match)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            suppressed = self.ctx.__exit__(*exc)
            message = str(self.info.value)
            where = f"{path}:{line}: " if line is not None else f"{path}: "
            assert message.startswith(where), message
            assert "\n" not in message and ";" in message, message
            assert self.info.value.line == line
            return suppressed
    return Check()


# CoNLL-2003: IOB1 (I- starts an entity unless one of the same type is just before)
CONLL_IOB1 = """-DOCSTART- -X- -X- O

EU NNP B-NP I-ORG
rejects VBZ B-VP O
German JJ B-NP I-MISC
call NN I-NP O

Peter NNP B-NP I-PER
Blackburn NNP I-NP I-PER
"""


def test_conll_space_separated_docstart_and_blank_lines(tmp_path):
    path = write(tmp_path, "train.txt", CONLL_IOB1)
    sentences = read_conll(path)
    assert sentences == [
        TaggedSentence(["EU", "rejects", "German", "call"], ["I-ORG", "O", "I-MISC", "O"], 3),
        TaggedSentence(["Peter", "Blackburn"], ["I-PER", "I-PER"], 8)]
    assert [s.tags for s in read_conll(path, tag_column=2)][1] == ["B-NP", "I-NP"]
    assert to_iob2(sentences[0].tags) == ["B-ORG", "O", "B-MISC", "O"]
    assert read_tagging(path, column="3") == sentences          # the CLI passes a string


def test_conll_tab_separated_keeps_spaces_in_words_and_docstart_ends_a_sentence(tmp_path):
    text = "New York\tB-LOC\r\nis\tO\r\n-DOCSTART-\tO\r\nParis\tB-LOC\r\n"
    sentences = read_tagging(write(tmp_path, "t.tsv", text))
    assert [(s.words, s.tags, s.line) for s in sentences] == [
        (["New York", "is"], ["B-LOC", "O"], 1), (["Paris"], ["B-LOC"], 4)]


def test_to_iob2():
    assert to_iob2(["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG"]) == \
        ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG"]
    iob2 = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "O"]
    assert to_iob2(iob2) == iob2
    assert to_iob2(["NOUN", "O", "VERB"]) == ["NOUN", "O", "VERB"]


def test_is_iob_tagging():
    def s(*tags):
        return TaggedSentence(list("abcdef")[:len(tags)], list(tags), 1)
    assert is_iob_tagging([s("B-PER", "I-PER", "O"), s("O")])
    assert not is_iob_tagging([s("NOUN", "VERB")])
    assert not is_iob_tagging([s("B-PER", "PER")])
    assert not is_iob_tagging([s("O", "O")])          # nothing to score as entities


@pytest.mark.parametrize("text, line, match", [
    ("EU B-ORG\nrejects O extra\n", 2, "3 columns where the first token line \\(line 1\\) has 2"),
    ("\n\nEU\nrejects O\n", 3, "only 1 column"),
    ("EU\tB-ORG\nrejects O\n", 2, "1 column where .*tab-separated"),
])
def test_conll_column_errors(tmp_path, text, line, match):
    path = write(tmp_path, "bad.conll", text)
    with raises_at(path, line, match):
        read_conll(path)


def test_conll_tag_column_out_of_range_and_same_as_word(tmp_path):
    path = write(tmp_path, "c.txt", "-DOCSTART- O\n\nEU B-ORG\n")
    with raises_at(path, 3, "no tag column 5; choose a column from 0 to 1"):
        read_conll(path, tag_column=5)
    with raises_at(path, 3, "the same"):
        read_conll(path, tag_column=0)
    with raises_at(path, None, "is a name"):
        read_tagging(path, column="ner")


CONLLU = """# sent_id = 1
# text = Vámonos al mar.
1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_
1\tVamos\tir\tVERB\tVMM\t_\t0\troot\t_\t_
2\tnos\tnosotros\tPRON\tPP\t_\t1\tobj\t_\t_
3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_
3\ta\ta\tADP\tSPS\t_\t5\tcase\t_\t_
4\tel\tel\tDET\tDA\t_\t5\tdet\t_\t_
5\tmar\tmar\tNOUN\tNC\t_\t1\tobl\t_\tSpaceAfter=No
5.1\tva\tir\tVERB\t_\t_\t_\t_\t1:conj\t_
6\t.\t.\tPUNCT\tFp\t_\t1\tpunct\t_\t_

# sent_id = 2
1\tSí\tsí\tINTJ\tI\t_\t0\troot\t_\t_
"""


def test_conllu_comments_multiword_ranges_empty_nodes_and_columns(tmp_path):
    path = write(tmp_path, "es.conllu", CONLLU)
    sentences = read_tagging(path)
    assert sentences[0] == TaggedSentence(["Vamos", "nos", "a", "el", "mar", "."],
                                          ["VERB", "PRON", "ADP", "DET", "NOUN", "PUNCT"], 4)
    assert sentences[1] == TaggedSentence(["Sí"], ["INTJ"], 14)
    assert read_conllu(path, "xpos")[0].tags == ["VMM", "PP", "SPS", "DA", "NC", "Fp"]
    assert read_tagging(path, column="XPOS") == read_tagging(path, column=4)
    assert read_tagging(path, column="7", fmt="CoNLLU")[0].tags == ["root", "obj", "case",
                                                                    "det", "obl", "punct"]


def test_conllu_errors(tmp_path):
    path = write(tmp_path, "bad.conllu", "# c\n1\tEU\teu\tPROPN\n")
    with raises_at(path, 2, "4 tab-separated columns; CoNLL-U token lines have 10"):
        read_tagging(path)
    good = write(tmp_path, "g.conllu", "1\tEU\teu\tPROPN\t_\t_\t0\troot\t_\t_\n")
    with raises_at(good, None, "no CoNLL-U column 'pos'"):
        read_conllu(good, "pos")
    with raises_at(good, None, "'xpos' is '_' \\(unset\\) for every token"):
        read_conllu(good, "xpos")


def test_tagging_file_errors(tmp_path):
    empty = write(tmp_path, "empty.conll", "-DOCSTART- -X- O\n\n\n")
    with raises_at(empty, None, "no sentences"):
        read_tagging(empty)
    with raises_at(tmp_path / "nope.conll", None, "no such file"):
        read_tagging(tmp_path / "nope.conll")
    latin = write(tmp_path, "latin.conll", "EU B-ORG\n\nMünchen B-LOC\n", encoding="latin-1")
    with raises_at(latin, 3, "not UTF-8 text \\(byte 0xfc\\); convert"):
        read_tagging(latin)
    with raises_at(empty, None, "unknown tagging format 'iob'"):
        read_tagging(empty, fmt="iob")


def test_check_iob_tags(tmp_path):
    path = tmp_path / "ner.txt"
    good = [TaggedSentence(["EU", "rejects"], ["B-ORG", "O"], 1),
            TaggedSentence(["Peter", "Blackburn"], ["S-PER", "E-PER"], 4)]
    check_iob_tags(good, path)
    check_iob_tags([TaggedSentence(["a", "b"], ["NOUN", "VERB"], 1)], path)   # not IOB: fine
    bad = good + [TaggedSentence(["in", "Bonn", "today"], ["O", "LOC", "O"], 7),
                  TaggedSentence(["Bonn"], ["B-LOC"], 11)]
    with raises_at(path, 7, "tag 'LOC' \\(token 2, 'Bonn',"):
        check_iob_tags(bad, path)


def test_check_labels():
    assert check_labels(["pos", "neg", "pos"], ["neg", "neutral", "meh", "neutral"], "dev.csv") \
        == ["meh", "neutral"]
    assert check_labels(iter(["a"]), iter(["a"]), "dev.csv", what="tag") == []


# -- classification ------------------------------------------------------------------------

def test_csv_quoted_commas_newlines_and_a_pair_column(tmp_path):
    text = ('premise,hypothesis,label\n'
            '"A man, a plan","A canal",entailment\n'
            '\n'
            '"Two\nlines ""quoted""",Short, neutral \n')
    path = write(tmp_path, "nli.csv", text)
    examples = read_classification(path, text_column="premise", text_pair_column="hypothesis")
    assert [(e.text, e.text_pair, e.label, e.line) for e in examples] == [
        ("A man, a plan", "A canal", "entailment", 2),
        ('Two\nlines "quoted"', "Short", "neutral", 4)]
    single = read_classification(path, text_column="hypothesis")
    assert single[0].text_pair is None and single[0].text == "A canal"


def test_tsv_takes_quotes_literally(tmp_path):
    path = write(tmp_path, "sst.tsv", 'sentence\tlabel\nit \'s a "charming\t1\nbad .\t0\n')
    examples = read_classification(path, text_column="sentence")
    assert [(e.text, e.label, e.line) for e in examples] == [('it \'s a "charming', "1", 2),
                                                            ("bad .", "0", 3)]
    assert read_classification(write(tmp_path, "x.tab", "text\tlabel\nok\tyes\n"))[0].label == "yes"


def test_jsonl_int_labels_and_blank_lines(tmp_path):
    lines = [{"text": "good", "label": 1}, {"text": "bad", "label": 0, "extra": [1]},
             {"text": "so so", "label": "neutral"}, {"text": "yes", "label": True}]
    text = json.dumps(lines[0]) + "\n\n" + "\n".join(json.dumps(x) for x in lines[1:]) + "\n"
    path = write(tmp_path, "train.jsonl", text)
    examples = read_classification(path)
    assert [(e.text, e.label, e.line) for e in examples] == [
        ("good", "1", 1), ("bad", "0", 3), ("so so", "neutral", 4), ("yes", "true", 5)]
    assert read_classification(write(tmp_path, "data.txt", text), fmt="json") == examples


def test_missing_column_names_the_columns_and_the_flag(tmp_path):
    path = write(tmp_path, "a.csv", "a,b,c\n1,2,3\n")
    with raises_at(path, None, "no column 'label' \\(columns: a, b, c\\); pass --label_column"):
        read_classification(path, text_column="a")
    with raises_at(path, None, "no column 'text'.*pass --text_column"):
        read_classification(path, label_column="a")
    with raises_at(path, None, "no column 'h'.*pass --text_pair_column"):
        read_classification(path, text_column="a", text_pair_column="h", label_column="b")
    jsonl = write(tmp_path, "a.jsonl", '\n{"text": "x", "y": 1}\n')
    with raises_at(jsonl, 2, "no column 'label' \\(columns: text, y\\); pass --label_column"):
        read_classification(jsonl)


@pytest.mark.parametrize("name, text, line, match", [
    ("e.csv", "text,label\nfine,1\n  ,0\n", 3, "empty 'text'; fill it in or remove the row"),
    ("e.tsv", "text\tlabel\nfine\t\n", 2, "empty 'label'"),
    ("e.jsonl", '{"text": "a", "label": null}\n', 1, "empty 'label'"),
    ("c.csv", "text,label\n\"a, b\",1\nc, d,1\n", 3, "3 cells where the header \\(line 1\\) "
                                                   "has 2 columns; quote cells"),
    ("b.jsonl", '{"text": "a", "label": 1}\n{"text": "b", label: 2}\n', 2, "not valid JSON"),
    ("o.jsonl", '["a", 1]\n', 1, "not a JSON object"),
    ("l.jsonl", '{"text": "a", "label": [1]}\n', 1, "'label' is \\[1\\], not a label"),
    ("t.jsonl", '{"text": 5, "label": 1}\n', 1, "'text' is 5, not a string"),
    ("u.csv", "text,label\n\"open,1\nb,0\nc,1\n", 2, "1 cell where the header \\(line 1\\) "
                                                  "has 2 columns; the row runs to line 4: is a "
                                                  "quote on line 2 not closed\\?"),
])
def test_classification_line_errors(tmp_path, name, text, line, match):
    path = write(tmp_path, name, text)
    with raises_at(path, line, match):
        read_classification(path)


def test_csv_module_errors_name_the_row(tmp_path, monkeypatch):
    import trainer.finetune.tables as tables
    long_cell = write(tmp_path, "ok.csv", "text,label\n" + "x" * 200_000 + ",1\n")
    assert len(read_classification(long_cell)[0].text) == 200_000   # over csv's default limit
    monkeypatch.setattr(tables, "_CELL_LIMIT", 8)       # the one error non-strict csv raises
    path = write(tmp_path, "long.csv", "text,label\nshort,1\n\"far too\nlong\",1\n")
    with raises_at(path, 3, "not valid CSV \\(field larger than field limit \\(8\\)\\)"):
        read_classification(path)


@pytest.mark.parametrize("name, text, kwargs, match", [
    ("empty.csv", "", {}, "empty file"),
    ("header.tsv", "text\tlabel\n\n", {}, "no examples"),
    ("empty.jsonl", "\n", {}, "no examples"),
    ("array.json", '[{"text": "a", "label": 1}]', {}, "a JSON array"),
    ("data.txt", "text,label\n", {}, "cannot tell the format from the suffix '.txt'"),
    ("data.csv", "text,label\n", {"fmt": "xml"}, "unknown format 'xml'"),
])
def test_classification_file_errors(tmp_path, name, text, kwargs, match):
    path = write(tmp_path, name, text)
    with raises_at(path, None, match):
        read_classification(path, **kwargs)


# -- SQuAD ---------------------------------------------------------------------------------

CONTEXT = "Paris is the capital of France. Paris has 2 million people."


def squad_file(tmp_path, qas, version="1.1", name="squad.json"):
    doc = {"version": version, "data": [{"title": "T", "paragraphs": [
        {"context": CONTEXT, "qas": qas}]}]}
    return write(tmp_path, name, json.dumps(doc, ensure_ascii=False))


def qa(qid, answers, **extra):
    return {"id": qid, "question": f"q {qid}?", **extra,
            "answers": [{"text": t, "answer_start": s} for t, s in answers]}


def test_squad_v1_relocates_wrong_starts_and_counts_answers_not_found(tmp_path):
    path = squad_file(tmp_path, [
        qa("ok", [("France", 24)]),
        qa("moved", [("Paris", 35)]),          # wrong start: nearest 'Paris' is at 32
        qa("spaces", [(" France", 23)]),        # surrounding space: same answer, not moved
        qa("mixed", [("London", 0), ("capital", 13)]),
        qa("gone", [("Berlin", 3)]),           # nowhere in the context: question dropped
    ])
    squad = read_squad(path)
    assert not squad.version_2
    assert [(e.id, e.answers) for e in squad.examples] == [
        ("ok", [("France", 24)]), ("moved", [("Paris", 32)]), ("spaces", [("France", 24)]),
        ("mixed", [("capital", 13)])]
    assert (squad.relocated, squad.not_found, squad.dropped_examples) == (1, 2, 1)
    assert squad.examples[0].context == CONTEXT and squad.examples[0].question == "q ok?"


def test_squad_v2_unanswerable(tmp_path):
    path = squad_file(tmp_path, [
        qa("yes", [("Paris", 0)], is_impossible=False),
        qa("no", [], is_impossible=True,
           plausible_answers=[{"text": "Berlin", "answer_start": 0}]),
        qa("empty", []),                        # v2 file without the flag: unanswerable
    ], version="v2.0")
    squad = read_squad(path)
    assert squad.version_2
    assert [(e.id, e.is_impossible, e.answers) for e in squad.examples] == [
        ("yes", False, [("Paris", 0)]), ("no", True, []), ("empty", True, [])]
    # a flag alone makes a file v2; in a v1 file an empty answer list is dropped
    assert read_squad(squad_file(tmp_path, [qa("a", [("Paris", 0)]), qa("b", [], is_impossible=True)],
                                 name="flag.json")).version_2
    v1 = read_squad(squad_file(tmp_path, [qa("a", [("Paris", 0)]), qa("b", [])], name="v1.json"))
    assert not v1.version_2 and [e.id for e in v1.examples] == ["a"] and v1.dropped_examples == 1


@pytest.mark.parametrize("qas, match", [
    ([{"id": "1", "answers": []}], "data\\[0\\].paragraphs\\[0\\].qas\\[0\\]: no 'question'"),
    ([qa("1", [("Paris", 0)]), {"question": "?"}], "qas\\[1\\]: no 'id'"),
    ([qa("1", [("Paris", 0)]), qa("1", [("France", 24)])],
     "qas\\[1\\]: id '1' already used at data\\[0\\].paragraphs\\[0\\].qas\\[0\\]"),
    ([qa("1", [("Paris", "0")])], "qas\\[0\\].answers\\[0\\].answer_start: a string, expected a "
                                  "whole number"),
    ([{"id": "1", "question": "?", "answers": [{"answer_start": 0}]}], "answers\\[0\\]: no 'text'"),
    ([qa("1", [("Paris", 0)], is_impossible="no")], "is_impossible: a string, expected true or false"),
    ([qa("1", [("Berlin", 0)])], "no usable questions \\(1 answers not found"),
    ("x", "paragraphs\\[0\\].qas: a string, expected a list"),
])
def test_squad_structure_errors_name_the_place(tmp_path, qas, match):
    path = squad_file(tmp_path, qas)
    with raises_at(path, None, match):
        read_squad(path)


def test_squad_file_errors(tmp_path):
    bad = write(tmp_path, "bad.json", '{"version": "1.1",\n "data": [}\n')
    with raises_at(bad, 2, "not valid JSON"):
        read_squad(bad)
    top = write(tmp_path, "top.json", '[{"context": "x"}]')
    with raises_at(top, None, "no 'data' list at the top"):
        read_squad(top)
    article = write(tmp_path, "article.json", '{"data": [{"title": "x"}]}')
    with raises_at(article, None, "data\\[0\\]: no 'paragraphs'"):
        read_squad(article)
    with raises_at(tmp_path, None, "is a folder"):
        read_squad(tmp_path)


def test_the_ner_task_requires_entity_tags_at_the_tags_own_line(tmp_path):
    """--task ner scores entities: a tag that is neither O nor B-/I-/E-/S-TYPE is one error at
    its own line before training, however few tags the file has (check_iob_tags lets a file of
    mostly unprefixed tags through; the metric then ended in a traceback)."""
    path = write(tmp_path, "bad.conll", "EU B-ORG\nrejects O\n\nWORD NOT_A_TAG\nhere O\n")
    sentences = read_tagging(path)
    check_iob_tags(sentences, path)                 # 1 of 2 prefixed: not taken for IOB there
    with raises_at(path, 4, "tag 'NOT_A_TAG' \\(token 'WORD'\\) is neither O nor B-/I-/E-/S-TYPE.*"
                            "fix the tag"):
        require_entity_tags(sentences, path)
    pos = write(tmp_path, "pos.conllu", "# text = a b\n1\ta\ta\tNOUN\t_\t_\t0\troot\t_\t_\n"
                                        "2\tb\tb\tVERB\t_\t_\t1\tdep\t_\t_\n")
    with raises_at(pos, 2, "is it a POS file \\(--task pos\\)"):
        require_entity_tags(read_tagging(pos), pos)
    good = write(tmp_path, "good.conll", "EU S-ORG\nrejects O\n\nPeter B-PER\nBlack E-PER\n")
    require_entity_tags(read_tagging(good), good)
