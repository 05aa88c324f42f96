#!/usr/bin/env python3
"""Holds README.md's commands and example to the build (ctest ReadmeCommands).

- The C++ example compiles, as a function body, against the public headers.
- "Two commands": every script exists and is executable, every preset exists, and the programs
  they start are checked as below. (tools/run_tests.sh is what CI runs.)
- The `edgeattn` block: every option of every command is one that its subcommand's --help lists;
  `edgeattn --version` and `edgeattn info` run and print what the README says they print.
"""
import argparse
import json
import pathlib
import re
import shlex
import subprocess
import sys

# The names the README's example uses without declaring them.
EXAMPLE_PARAMETERS = ("const float* in_w, const float* in_b, const float* out_w, "
                      "const float* out_b, const float* x, float* y, std::size_t batch, "
                      "std::size_t length, const float* q, const float* k, const float* v, "
                      "std::size_t lq, std::size_t lk")


def blocks(text):
    return re.findall(r"```(\w*)\n(.*?)```", text, re.S)


def compile_example(code, args, work):
    includes = [l for l in code.splitlines() if l.startswith("#include")]
    body = [l for l in code.splitlines() if not l.startswith("#include")]
    source = work / "readme_example.cc"
    source.write_text("\n".join(includes + ["#include <cstddef>",
                                            f"void ReadmeExample({EXAMPLE_PARAMETERS}) {{"] +
                                 body + ["}", ""]))
    command = [args.cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror"]
    command += [f"-I{d}" for d in args.include] + [str(source)]
    subprocess.run(command, check=True)
    return "the C++ example compiles"


def help_text(cli, sub):
    command = [cli] + ([sub] if sub else []) + ["--help"]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def check_edgeattn_command(words, cli):
    """words: an `edgeattn ...` command line; checks its options against --help."""
    sub = words[1] if len(words) > 1 and not words[1].startswith("-") else ""
    known = help_text(cli, sub)
    for option in re.findall(r"--[a-z0-9-]+", " ".join(words)):
        # The whole option: as a substring, --thread or --min would pass on --threads, --min-time.
        if option != "--help" and not re.search(re.escape(option) + r"(?![a-z0-9-])", known):
            sys.exit(f"README: `{' '.join(words)}`: `edgeattn {sub}` has no option {option}")


def check_two_commands(code, source, cli):
    presets = {p["name"] for p in json.loads((source / "CMakePresets.json").read_text())
               ["configurePresets"]}
    for command in re.split(r"&&|\n", code):
        words = shlex.split(command, comments=True)
        if not words:
            continue
        if words[0].startswith("tools/"):
            path = source / words[0]
            if not path.is_file() or not path.stat().st_mode & 0o111:
                sys.exit(f"README: {words[0]} is not an executable script")
        elif words[0] == "cmake" and "--preset" in words:
            name = words[words.index("--preset") + 1]
            if name not in presets:
                sys.exit(f"README: no CMake preset {name}")
        elif words[0].endswith("tools/edgeattn"):
            check_edgeattn_command(["edgeattn"] + words[1:], cli)
        else:
            sys.exit(f"README: unchecked command `{command.strip()}`")
    return "the build and test commands name existing scripts and presets"


def check_program_block(code, text, cli):
    commands = []
    for line in code.splitlines():
        line = line.split("#", 1)[0].rstrip()
        if line.startswith("edgeattn"):
            commands.append(line)
        elif line.strip() and commands:
            commands[-1] += " " + line.strip()  # a continuation of the command above
    for command in commands:
        check_edgeattn_command(command.replace("[", " ").replace("]", " ").split(), cli)
    ran = []
    if "`edgeattn --version`" in text:
        out = subprocess.run([cli, "--version"], check=True, capture_output=True, text=True)
        if not re.search(r"\d+\.\d+\.\d+", out.stdout):
            sys.exit(f"README: edgeattn --version printed {out.stdout!r}")
        ran.append("--version")
    if "edgeattn info" in commands:
        out = subprocess.run([cli, "info"], check=True, capture_output=True, text=True).stdout
        for field in ("highway compiled:", "highway chosen:", "fp32 kernels:", "thread pool:"):
            if field not in out:
                sys.exit(f"README: edgeattn info does not print {field!r}")
        ran.append("info")
    return f"{len(commands)} edgeattn commands use existing options; ran {', '.join(ran)}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", type=pathlib.Path, required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--work", type=pathlib.Path, required=True)
    parser.add_argument("--include", action="append", default=[])
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    text = (args.source / "README.md").read_text()
    found = blocks(text)
    cpp = [code for lang, code in found if lang == "cpp"]
    sh = [code for lang, code in found if lang == "sh"]
    program = [code for code in sh if re.search(r"^edgeattn ", code, re.M)]
    build = [code for code in sh if code not in program]
    if not cpp or not program or not build:
        sys.exit("README: expected a cpp example, build commands and an edgeattn block")
    print(compile_example(cpp[0], args, args.work))
    for code in build:
        print(check_two_commands(code, args.source, args.cli))
    for code in program:
        print(check_program_block(code, text, args.cli))


if __name__ == "__main__":
    main()
