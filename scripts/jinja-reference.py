#!/usr/bin/env python3
"""Reference renders from Python jinja2, configured exactly as transformers' `render_jinja_template` configures it.

The renderer's expected outputs (test fixtures) are produced by this script and committed; the tests compare
against the committed strings, so CI needs no Python. Environment (transformers 5.x `_compile_jinja_template`):
jinja2 `ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)` with the `loopcontrols` extension and
the `{% generation %}` tag, `tojson` = `json.dumps(x, ensure_ascii=False, indent=None, separators=None,
sort_keys=False)`, globals `raise_exception` (raises `TemplateError`) and `strftime_now`. A render passes
`messages`, `tools` (None when there are none), `documents=None`, `add_generation_prompt` and the variables.

Usage (jinja2 3.1.x):
  python3 scripts/jinja-reference.py cases test/fixtures/jinja/cases.json
      fills `expected` of every case: {"text": ...} or {"error": "Type: message"}; the file's "defaults" are the
      variables of every case, a case may add "vars" (JSON) and "now" (ISO datetime that strftime_now reads).
  python3 scripts/jinja-reference.py templates test/fixtures/templates-extra
      for every folder holding chat_template.jinja and variables.json: adapts the 9 probe conversations to the
      template (docs/loss-mask-rules.md "What the template is given", decided by renders here), renders every prefix with and
      without the generation prompt, writes renders.json; then writes the folder's index.json. strftime_now reads
      a fixed clock (TEMPLATE_CLOCK, recorded as "clock"), so renders do not depend on the day.
"""
import copy
import datetime
import hashlib
import json
import os
import sys

import jinja2
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

CLOCK = {"now": None}


class GenerationTag(Extension):
    """transformers' AssistantTracker with the tracker inactive: `{% generation %}...{% endgeneration %}` renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    def _generation_support(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    now = CLOCK["now"] or datetime.datetime.now()
    return now.strftime(format)


ENV = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols])
ENV.filters["tojson"] = tojson
ENV.globals["raise_exception"] = raise_exception
ENV.globals["strftime_now"] = strftime_now


def error_text(e):
    return f"{type(e).__name__}: {e}"


def run_cases(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    for case in doc["cases"]:
        CLOCK["now"] = datetime.datetime.fromisoformat(case["now"]) if case.get("now") else None
        try:
            tmpl = ENV.from_string(case["template"])
        except Exception as e:  # compile error
            case["expected"] = {"error": error_text(e), "phase": "compile"}
            continue
        try:
            case["expected"] = {"text": tmpl.render(**{**doc.get("defaults", {}), **case.get("vars", {})})}
        except RecursionError as e:
            case["expected"] = {"error": error_text(e)}
        except Exception as e:
            case["expected"] = {"error": error_text(e)}
    doc["generated_by"] = f"scripts/jinja-reference.py cases (jinja2 {jinja2.__version__})"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{len(doc['cases'])} cases written to {path}")


# --- probe conversations -------------------------------------------------------------------------------------

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}, "required": ["city"]},
    },
}


def weather_call():
    return {"id": "functions.get_weather:0", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}


TOOL_RESULT = {"role": "tool", "tool_call_id": "functions.get_weather:0", "name": "get_weather", "content": '{"temp_c": 18, "sky": "clear"}'}

# The 9 probes of test/fixtures/templates (README "Probes"), in their object-arguments, split-reasoning form.
PROBES = [
    ("p1_single", None, [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "2+2 equals 4."}]),
    ("p2_system_3turns", None, [
        {"role": "system", "content": "You are a concise assistant."},
        {"role": "user", "content": "Name a primary color."}, {"role": "assistant", "content": "Red."},
        {"role": "user", "content": "Another one?"}, {"role": "assistant", "content": "Blue."},
        {"role": "user", "content": "And a third?"}, {"role": "assistant", "content": "Yellow."}]),
    ("p3_tool_call", [WEATHER_TOOL], [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [weather_call()]},
        TOOL_RESULT, {"role": "assistant", "content": "It is 18 C and clear in Paris."}]),
    ("p4_reasoning", None, [
        {"role": "user", "content": "Is 17 prime?"},
        {"role": "assistant", "reasoning_content": "17 has no divisors other than 1 and 17.", "content": "Yes, 17 is prime."},
        {"role": "user", "content": "Is 21 prime?"},
        {"role": "assistant", "reasoning_content": "21 = 3 * 7.", "content": "No, 21 = 3 * 7."}]),
    ("p5_trailing_tool", [WEATHER_TOOL], [
        {"role": "user", "content": "Check the weather in Paris."},
        {"role": "assistant", "content": "Let me check.", "tool_calls": [weather_call()]}, TOOL_RESULT]),
    ("p6_toolcall_empty_content", [WEATHER_TOOL], [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [weather_call()]},
        TOOL_RESULT, {"role": "assistant", "content": "It is 18 C and clear in Paris."}]),
    ("p7_reasoning_final_multiturn", None, [
        {"role": "system", "content": "You are a careful assistant."},
        {"role": "user", "content": "Name a prime number."}, {"role": "assistant", "content": "7."},
        {"role": "user", "content": "Is 91 prime?"},
        {"role": "assistant", "reasoning_content": "91 = 7 * 13, so it is composite.", "content": "No, 91 = 7 * 13."}]),
    ("p8_inline_think", None, [
        {"role": "user", "content": "What is 3+4?"},
        {"role": "assistant", "content": "3+4 equals 7.", "reasoning_content": "Add 3 and 4."},
        {"role": "user", "content": "And 5+6?"},
        {"role": "assistant", "content": "5+6 equals 11.", "reasoning_content": "5 plus 6 is 11."}]),
    ("p9_trailing_placeholder", None, [{"role": "user", "content": "Write a haiku about rain."}, {"role": "assistant", "content": ""}]),
]


def render(tmpl, variables, messages, tools, gen):
    return tmpl.render(messages=messages, tools=tools or None, documents=None, add_generation_prompt=gen, **variables)


def try_render(tmpl, variables, messages, tools=None):
    try:
        return render(tmpl, variables, messages, tools, False)
    except Exception:
        return None


def probe_call(args):
    return {"id": "call_probe", "type": "function", "function": {"name": "probe_tool_name_7f3a", "arguments": args}}


def adaptation(tmpl, variables):
    """Spec v1.4 "What the template is given", decided by rendering probes: null content, argument form, reasoning split."""
    user = {"role": "user", "content": "probe"}
    # Null content: keep None only when the call's name shows with None and not with "" (DeepSeek-V3).
    as_null = try_render(tmpl, variables, [user, {"role": "assistant", "content": None, "tool_calls": [probe_call('{"q": "x"}')]}])
    as_empty = try_render(tmpl, variables, [user, {"role": "assistant", "content": "", "tool_calls": [probe_call('{"q": "x"}')]}])
    keep_null = as_null is not None and "probe_tool_name_7f3a" in as_null and "probe_tool_name_7f3a" not in (as_empty or "")
    content = None if keep_null else ""
    # Arguments: objects when the template shows the call (its name or its arguments) without raising and not in
    # Python's form of a dict; JSON strings otherwise (also when it shows no call at all).
    text = try_render(tmpl, variables, [user, {"role": "assistant", "content": content, "tool_calls": [probe_call({"q": "x7f3a"})]}])
    object_args = text is not None and ("probe_tool_name_7f3a" in text or "x7f3a" in text) and "{'q': 'x7f3a'}" not in text
    # Reasoning: split inline <think> only when the template renders reasoning_content somewhere.
    conv = [
        user,
        {"role": "assistant", "content": content, "reasoning_content": "probe reasoning A7f3", "tool_calls": [probe_call({"q": "x"} if object_args else '{"q": "x"}')]},
        {"role": "tool", "tool_call_id": "call_probe", "name": "probe_tool_name_7f3a", "content": "ok"},
        {"role": "assistant", "content": "done", "reasoning_content": "probe reasoning B7f3"},
    ]
    text = try_render(tmpl, variables, conv) or ""
    split = "A7f3" in text or "B7f3" in text
    return keep_null, object_args, split


def adapt(messages, keep_null, object_args, split):
    out = []
    for m in copy.deepcopy(messages):
        if m["role"] == "assistant" and m.get("tool_calls"):
            if not m.get("content"):
                m["content"] = None if keep_null else ""
            for tc in m["tool_calls"]:
                a = tc["function"]["arguments"]
                if not object_args and not isinstance(a, str):
                    tc["function"]["arguments"] = json.dumps(a, ensure_ascii=False)
        elif m.get("content") is None:
            m["content"] = ""
        out.append(m)
    return out


def inline_think(messages):
    out = []
    for m in copy.deepcopy(messages):
        if m["role"] == "assistant" and "reasoning_content" in m:
            m["content"] = f"<think>\n{m.pop('reasoning_content')}\n</think>\n\n{m['content']}"
        out.append(m)
    return out


# strftime_now reads this clock in template renders (naive local time, as datetime.now() gives); the tests pass the same.
TEMPLATE_CLOCK = "2025-03-14T09:26:53"


def run_templates(root):
    CLOCK["now"] = datetime.datetime.fromisoformat(TEMPLATE_CLOCK)
    index = []
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        src_path = os.path.join(folder, "chat_template.jinja")
        if not os.path.isfile(src_path):
            continue
        with open(src_path, "rb") as f:
            raw = f.read()
        source = raw.decode("utf-8")
        with open(os.path.join(folder, "variables.json"), encoding="utf-8") as f:
            variables = json.load(f)
        with open(os.path.join(folder, "source.json"), encoding="utf-8") as f:
            origin = json.load(f)
        try:
            tmpl = ENV.from_string(source)
        except Exception as e:  # the template does not compile: transformers cannot use it at all
            doc = {"template": name, "source": origin, "renderer": {"jinja2": jinja2.__version__}, "variables": variables, "compile_error": error_text(e), "probes": []}
            with open(os.path.join(folder, "renders.json"), "w", encoding="utf-8") as f:
                json.dump(doc, f, ensure_ascii=False, indent=1)
                f.write("\n")
            sha = hashlib.sha256(raw).hexdigest()
            index.append({"template": name, "renders": 0, "render_errors": 0, "compile_error": True, "template_sha256": sha, "sha256_16": sha[:16], "repo": origin.get("repo"), "path": origin.get("path"), "commit": origin.get("commit")})
            print(f"{name:55s} does not compile: {error_text(e)[:80]}")
            continue
        keep_null, object_args, split = adaptation(tmpl, variables)
        probes = []
        n_ok = n_err = 0
        for pid, tools, messages in PROBES:
            msgs = adapt(messages, keep_null, object_args, split)
            if pid == "p8_inline_think" and not split:
                msgs = inline_think(msgs)
            renders = []
            for n in range(1, len(msgs) + 1):
                for gen in (False, True):
                    try:
                        renders.append({"n_messages": n, "add_generation_prompt": gen, "text": render(tmpl, variables, msgs[:n], tools, gen)})
                        n_ok += 1
                    except Exception as e:
                        renders.append({"n_messages": n, "add_generation_prompt": gen, "error": error_text(e)})
                        n_err += 1
            probes.append({"id": pid, "tools": tools, "messages": msgs, "renders": renders})
        doc = {
            "template": name,
            "source": origin,
            "renderer": {"jinja2": jinja2.__version__, "call": "scripts/jinja-reference.py (transformers render_jinja_template's environment and call)"},
            "variables": variables,
            "clock": TEMPLATE_CLOCK,
            "messages_are": "the probe conversation as spec v1.4 \"What the template is given\" hands it to this template",
            "adaptation": {"null_tool_call_content": keep_null, "object_arguments": object_args, "reasoning_split": split},
            "probes": probes,
        }
        with open(os.path.join(folder, "renders.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False, indent=1)
            f.write("\n")
        sha = hashlib.sha256(raw).hexdigest()
        index.append({"template": name, "renders": n_ok, "render_errors": n_err, "template_sha256": sha, "sha256_16": sha[:16], "repo": origin.get("repo"), "path": origin.get("path"), "commit": origin.get("commit")})
        print(f"{name:55s} {n_ok:3d} renders {n_err:3d} errors  null={keep_null} objargs={object_args} split={split}")
    with open(os.path.join(root, "index.json"), "w", encoding="utf-8") as f:
        json.dump({"templates": index}, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("cases", "templates"):
        print(__doc__)
        sys.exit(2)
    (run_cases if sys.argv[1] == "cases" else run_templates)(sys.argv[2])
