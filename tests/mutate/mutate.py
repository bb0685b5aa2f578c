#!/usr/bin/env python3
"""mutate.py - mutation testing for redlock.h and its adapters.

Makes small, deliberate bugs ("mutants") in the library, one per copy of
the header, and runs a test suite against each: a mutant the suite fails on
is killed, one it passes survived, which points at behaviour no test checks.

    python3 tests/mutate/mutate.py [--target core|adapters] [--suite NAME]
        [--count N] [--seed S] [--jobs J] [--timeout SEC] [--list]
        [--only ID[,ID...]] [--keep] [--set VAR=VALUE]
        [--area rw|owner|adopt|events|new[,...]] [--functions REGEX[,REGEX...]]

The real files are never modified: each mutant is written to
build/mutate/<id>/ and the tests are built with -I build/mutate/<id> ahead
of -I. so the copy shadows the original. Build and run commands come from
the `make` rules in mk/*.mk, read at run time. See tests/mutate/README.md.
Standard library only; not part of `make test` (`make mutate` runs it).
"""

import argparse
import collections
import concurrent.futures
import dataclasses
import fcntl
import hashlib
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORK = REPO / 'build' / 'mutate'

# ---------------------------------------------------------------------------
# What can be mutated, and which tests judge the mutants. Edit here.
# ---------------------------------------------------------------------------

# files: what gets mutated; copy: what each mutant directory holds, so that
# includes between the headers (adapters/x.h -> "../redlock.h",
# "redlock_hiredis_common.h") resolve to the copies and never to a mix.
TARGETS = {
    'core': {
        'files': ['redlock.h'],
        'copy': ['redlock.h'],
        'scope': 'implementation',   # between the IMPLEMENTATION banner and its #endif
    },
    'adapters': {
        'files': ['adapters/redlock_socket.h', 'adapters/redlock_resp.h', 'adapters/redlock_hiredis.h',
                  'adapters/redlock_libev.h', 'adapters/redlock_hiredis_common.h', 'adapters/redlock_tls.h',
                  'adapters/redlock_nodes.h'],
        'copy': ['redlock.h', 'adapters'],
        'scope': 'functions',        # function bodies only
    },
}

# Suites: `make` check targets from mk/*.mk. Each check's $(BUILD)/<bin>
# prerequisites are built against the mutant; each recipe line that runs
# $(BUILD)/<bin> becomes a command (lines with --expect-violations, the
# simulator's negative controls, are skipped). `files` narrows the mutants
# to what the checks compile (default: all the target's files): a mutant in
# a file no test includes would survive for nothing. New suite: add a line.
SOCKET_CHECKS = ['check-resp', 'check-resp-fuzz', 'check-nodes', 'check-socket-hostile', 'check-socket-nomem', 'check-socket',
                 'check-socket-tls', 'check-sanitize-adapters', 'check-tsan-socket']
HIREDIS_CHECKS = ['check-hiredis', 'check-libev', 'check-tsan-hiredis', 'check-hiredis1-run']
SUITES = {
    'core': {
        'all': {'checks': ['check-unit', 'check-sim']},
        'unit': {'checks': ['check-unit']},
        'sim': {'checks': ['check-sim']},      # what the simulator catches on its own
    },
    'adapters': {
        'all': {'checks': SOCKET_CHECKS + HIREDIS_CHECKS},
        'socket': {'checks': SOCKET_CHECKS, 'files': ['adapters/redlock_socket.h', 'adapters/redlock_resp.h',
                                                      'adapters/redlock_tls.h', 'adapters/redlock_nodes.h']},
        'nodes': {'checks': ['check-nodes'], 'files': ['adapters/redlock_nodes.h']},
        'hiredis': {'checks': HIREDIS_CHECKS, 'files': ['adapters/redlock_hiredis.h', 'adapters/redlock_libev.h',
                                                        'adapters/redlock_hiredis_common.h']},
    },
}

# Checks that listen on loopback ports (redis-server on a "free" port, fake
# servers). Parallel mutants would race for the same ports, and a restarted
# node's port could be taken by another mutant's server, so each of these
# runs in its own network namespace (or, without unshare, one at a time).
NETWORK_CHECKS = {'check-socket-hostile', 'check-socket', 'check-socket-tls', 'check-hiredis', 'check-hiredis1-run', 'check-libev', 'check-sanitize-adapters',
                  'check-tsan-hiredis', 'check-tsan-socket'}

# Make variables replaced for mutant builds and runs. No -g: faster builds,
# nobody debugs a mutant. No valgrind: it would multiply the run time (a
# mutant that corrupts memory without crashing the test would survive, but
# the suites include ASan/UBSan and TSan builds for that).
MAKE_OVERRIDES = {'OPT': '-O2', 'VALGRIND': ''}

# Operators, in the order their mutants are generated: when two produce the
# same line (`return 0;` -> `return 1;` is also a constant change), the
# first one keeps it.
OPERATORS = {
    'ret': 'return-value swap: return 0 <-> 1, -1 -> 0, REDLOCK_OK <-> an error',
    'status': 'status swap: REDLOCK_ERR_A -> another REDLOCK_ERR_B of the enum',
    'neg': 'condition negation: if (X) -> if (!(X))',
    'logic': 'logical swap: && <-> ||',
    'rel': 'relational flip: < <-> <=, > <-> >=, == <-> !=',
    'arith': 'arithmetic swap: binary + <-> -, * <-> / (and +=, -=, *=, /=)',
    'const': 'integer constant off by one: N -> N+1, N -> N-1',
    'del': 'statement deletion: an assignment, increment or call line',
}

# Areas of the core, for --area: the code of one feature, wherever it lives.
# Each region is (function, lines): a regex the function's whole name must
# match, and None (all its lines) or a regex a line's code must contain
# (comments and string contents do not count), for functions that serve
# every kind of lock, such as the command builder or the API calls. A
# mutant belongs to an area when its line is in one of its regions. Keep
# these up to date when such code moves or is renamed: a region that
# matches no line is an error, so a stale one is noticed.
AREAS = {
    # readers-writer locks (section 12): the access mode, upgrade, downgrade,
    # the settle of a failed upgrade, and their scripts' commands and answers
    'rw': [
        (r'redlock__(access|scripts_only|set_access|start_upgrade|upgrade_done|decide_upgrade|decide_downgrade)', None),
        (r'redlock_(upgrade|downgrade|lock_access)', None),
        (r'redlock__script_bit', r'\brw\b|UPG|MODE'),
        (r'redlock__first_step', r'UPGRADE|DOWNGRADE|SETTLE|scripts_only'),
        (r'redlock__build', r'UPG_|MODE_|RWACQUIRE|RWEXTEND|RWRELEASE|redlock__access|held_as|wait_ms|DOWNGRADE'),
        (r'redlock__answer', r'UPG_|MODE_|A_WAITS|integer == 1 \?|integer < -1'),
        (r'redlock__answer_acquire', r'ACCESS'),
        (r'redlock__(step|lose|lock_deadline)|redlock_(release|extend)', r'upgrad|UPGRADE|DOWNGRADE|SETTLE'),
        (r'redlock_lock_init', r'access|ACCESS_SHIFT'),
    ],
    # a reentrant lock's owner id: the owner option, the default owner (the
    # client's id and the acquiring thread's bytes) and where it is kept
    'owner': [
        (r'redlock__(thread_id|hex64|default_owner_ready|take_default_owner|owner|owner_size|counter)', None),
        (r'redlock_lock_owner', None),
        (r'redlock__(take_token|build|strings_size)|redlock_(acquire|lock_adopt)', r'owner'),
        (r'redlock_lock_init', r'owner|olen|REENTRANT'),
    ],
    # redlock_lock_adopt: a token taken over, its validity (given, or unknown
    # until an extend) and the PTTL / GET that learn its life on the nodes
    'adopt': [
        (r'redlock_lock_adopt', None),
        (r'redlock__(adopted_get|adopted_life|life_known|answer_pttl|check_step)', None),
        (r'redlock_lock_(valid_until|remaining_us)|redlock__(report|start_extend|decide_extend|decide_upgrade|won)',
         r'_validity_unknown'),
        (r'redlock__answer_(release|extend)', r'F_LIFE|PTTL'),
    ],
    # what the caller is told: events (their fields) and results (their
    # fields, among them the elapsed time from the operation's call)
    'events': [
        (r'redlock__(emit|event_of|event|report|key_left)|redlock_event_name', None),
        (r'.*', r'\bev\.|redlock__event\b|redlock__event_of\b|redlock__emit\b|redlock__report\b|_op_start'),
    ],
}
AREAS['new'] = [r for name in ('rw', 'owner', 'adopt', 'events') for r in AREAS[name]]

DEFAULT_TIMEOUT = 120      # seconds per mutant, or 10x the unmutated run if longer
TIMEOUT_FACTOR = 10
BUILD_TIMEOUT = 600        # a compiler that hangs is our problem, not the mutant's


# ---------------------------------------------------------------------------
# Reading C: comments and literals masked, preprocessor lines, functions
# ---------------------------------------------------------------------------

def mask_c(text):
    """The text with comments and the contents of string and character
    literals replaced by spaces (quotes and newlines kept), so that operator
    and brace scans see only code, at the same offsets as the original."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            end = text.find('*/', i + 2)
            end = n if end < 0 else end + 2
            for k in range(i, end):
                if out[k] != '\n':
                    out[k] = ' '
            i = end
        elif text.startswith('//', i):
            while i < n and text[i] != '\n':
                out[i] = ' '
                i += 1
        elif c in '"\'':
            i += 1
            while i < n and text[i] != c and text[i] != '\n':
                step = 2 if text[i] == '\\' else 1
                for k in range(i, min(i + step, n)):
                    out[k] = ' '
                i += step
            i += 1
        else:
            i += 1
    return ''.join(out)


def preprocessor_lines(masked_lines):
    """Which lines are preprocessor directives, continuation lines included."""
    flags, continued = [], False
    for line in masked_lines:
        is_pp = continued or line.lstrip().startswith('#')
        flags.append(is_pp)
        continued = is_pp and line.rstrip().endswith('\\')
    return flags


FUNC_HEADER = re.compile(r'([A-Za-z_]\w*)\s*\(')
NOT_FUNCTIONS = {'if', 'for', 'while', 'switch', 'return', 'sizeof'}


def function_of_each_line(masked_lines, preproc):
    """The name of the function each line is in (None outside functions).
    A brace scan: a `{` at file scope after `name(...)` with no `=` opens a
    function body; `extern "C" {` is transparent; anything else (struct,
    enum, initialiser) is a block that is no function."""
    names = []
    depth, current, header = 0, None, ''
    for line, is_pp in zip(masked_lines, preproc):
        if is_pp:
            names.append(current)
            continue
        in_line = current
        for ch in line:
            if depth == 0:
                if ch == '{':
                    h = ' '.join(header.split())
                    m = FUNC_HEADER.search(h)
                    if re.search(r'extern\s*"\s*"\s*$', h):
                        pass                        # extern "C" { ... }
                    elif m and h.endswith(')') and '=' not in h and m.group(1) not in NOT_FUNCTIONS:
                        current = in_line = m.group(1)
                        depth = 1
                    else:
                        depth = 1
                    header = ''
                elif ch in ';}':
                    header = ''
                else:
                    header += ch
            elif ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
                if depth == 0:
                    current = None
        names.append(in_line)
        header += ' '
    return names


@dataclasses.dataclass
class Source:
    path: str            # relative to the repository
    text: str
    lines: list          # without line endings
    masked: list
    preproc: list
    funcs: list

    @classmethod
    def read(cls, path):
        text = (REPO / path).read_text()
        lines = text.split('\n')
        masked = mask_c(text).split('\n')
        preproc = preprocessor_lines(masked)
        return cls(path, text, lines, masked, preproc, function_of_each_line(masked, preproc))

    def with_line(self, index, new_line):
        lines = list(self.lines)
        lines[index] = new_line
        return '\n'.join(lines)


def mutable_lines(src, scope):
    """Indexes of the lines the target allows mutating (code lines only)."""
    if scope == 'implementation':
        start = next((i for i, l in enumerate(src.lines) if re.match(r'/\*\s+IMPLEMENTATION\b', l)), None)
        end = next((i for i, l in enumerate(src.lines) if l.startswith('#endif /* REDLOCK_IMPLEMENTATION */')), None)
        if start is None or end is None or end < start:
            sys.exit(f'mutate: cannot find the IMPLEMENTATION section of {src.path}')
        wanted = range(start + 1, end)
    else:
        wanted = [i for i, f in enumerate(src.funcs) if f]
    return [i for i in wanted if not src.preproc[i] and src.masked[i].strip()]


def status_names(redlock_h):
    """REDLOCK_ERR_* members of the status enum, in declaration order."""
    return list(dict.fromkeys(re.findall(r'\b(REDLOCK_ERR_\w+)\s*=\s*-?\d+', mask_c(redlock_h))))


# ---------------------------------------------------------------------------
# Mutation operators: each yields (start, end, replacement, what) for a line
# ---------------------------------------------------------------------------

TOKEN_RE = re.compile(r'''
    (?P<id>[A-Za-z_]\w*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<str>"[^"]*"|'[^']*')
  | (?P<op>\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\S)
''', re.X)

Token = collections.namedtuple('Token', 'kind text start end')

# Words after which + - * are unary (return -1, case -2, sizeof *p).
NOT_OPERANDS = {'return', 'case', 'sizeof', 'else', 'do', 'goto'}
# Words that start a declaration, never a statement worth deleting.
DECL_WORDS = {'static', 'const', 'struct', 'union', 'enum', 'unsigned', 'signed', 'int', 'char',
              'long', 'short', 'double', 'float', 'void', 'volatile', 'register', 'extern',
              'inline', 'typedef', '_Bool', 'bool'}
CONTROL_WORDS = {'if', 'else', 'for', 'while', 'do', 'switch', 'case', 'default', 'return',
                 'goto', 'break', 'continue'}
ASSIGN_OPS = {'=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<=', '>>='}


def tokenize(masked_line):
    return [Token(m.lastgroup, m.group(), m.start(), m.end()) for m in TOKEN_RE.finditer(masked_line)]


def is_operand(tok):
    if tok is None:
        return False
    if tok.kind == 'id':
        return tok.text not in NOT_OPERANDS
    return tok.kind in ('num', 'str') or tok.text in (')', ']')


def spaced(line, tok):
    """Whitespace on both sides: `a * b`, not `char *p` or `(size_t)-1`."""
    return 0 < tok.start and tok.end < len(line) and line[tok.start - 1].isspace() and line[tok.end].isspace()


def op_rel(ctx):
    flip = {'<': '<=', '<=': '<', '>': '>=', '>=': '>', '==': '!=', '!=': '=='}
    for t in ctx.tokens:
        if t.text in flip:
            yield t.start, t.end, flip[t.text], f'{t.text} -> {flip[t.text]}'


def op_arith(ctx):
    swap = {'+': '-', '-': '+', '*': '/', '/': '*', '+=': '-=', '-=': '+=', '*=': '/=', '/=': '*='}
    for k, t in enumerate(ctx.tokens):
        if t.text not in swap:
            continue
        prev = ctx.tokens[k - 1] if k else None
        binary = len(t.text) == 2 or (is_operand(prev) and (
            spaced(ctx.line, t) if t.text in '*/' or prev.text == ')' else True))
        if binary:
            yield t.start, t.end, swap[t.text], f'{t.text} -> {swap[t.text]}'


INT_RE = re.compile(r'^(0[xX][0-9a-fA-F]+|0|[1-9]\d*)([uUlL]*)$')


def op_const(ctx):
    for t in ctx.tokens:
        m = t.kind == 'num' and INT_RE.match(t.text)
        if not m:
            continue
        digits, suffix = m.groups()
        value = int(digits, 0)
        for new in (value + 1, value - 1):
            if new < 0:
                text = f'(-{-new}{suffix})'       # parenthesised: `x - 0` must not become `x --1`
            elif digits[:2].lower() == '0x':
                text = f'{digits[:2]}{new:X}{suffix}'
            else:
                text = f'{new}{suffix}'
            yield t.start, t.end, text, f'{t.text} -> {text}'


def op_logic(ctx):
    swap = {'&&': '||', '||': '&&'}
    for t in ctx.tokens:
        if t.text in swap:
            yield t.start, t.end, swap[t.text], f'{t.text} -> {swap[t.text]}'


def op_neg(ctx):
    toks = ctx.tokens
    for k, t in enumerate(toks[:-1]):
        if t.text != 'if' or toks[k + 1].text != '(':
            continue
        depth = 0
        for close in toks[k + 1:]:
            depth += {'(': 1, ')': -1}.get(close.text, 0)
            if depth == 0:
                break
        if depth == 0:                      # the condition ends on this line
            inner = ctx.line[toks[k + 1].end:close.start]
            yield toks[k + 1].end, close.start, f'!({inner})', 'if (X) -> if (!(X))'


def op_ret(ctx):
    toks = ctx.tokens
    for k, t in enumerate(toks):
        if t.text != 'return':
            continue
        value = []
        for v in toks[k + 1:]:
            if v.text == ';':
                break
            value.append(v)
        expr = ''.join(v.text for v in value)
        if expr == '0':
            new = '1'
        elif expr in ('1', '-1'):
            new = '0'
        elif expr == 'REDLOCK_OK' and ctx.statuses:
            new = ctx.rng.choice(ctx.statuses)
        elif expr in ctx.statuses:
            new = 'REDLOCK_OK'
        else:
            continue
        yield value[0].start, value[-1].end, new, f'return {expr} -> return {new}'


def op_status(ctx):
    for k, t in enumerate(ctx.tokens):
        if k and ctx.tokens[k - 1].text == 'case':
            continue                            # a duplicate case label: never compiles
        if t.kind == 'id' and t.text in ctx.statuses:
            new = ctx.rng.choice([s for s in ctx.statuses if s != t.text])
            yield t.start, t.end, new, f'{t.text} -> {new}'


def op_del(ctx):
    """A whole simple statement: one line, starting a statement, ending in
    `;`, balanced, an assignment / increment / call, not a declaration.
    The line is emptied rather than removed so line numbers stay put."""
    toks = ctx.tokens
    if not toks or toks[-1].text != ';' or any(t.text in '{}' for t in toks):
        return
    if sum({'(': 1, ')': -1}.get(t.text, 0) for t in toks) != 0:
        return
    first = toks[0]
    if first.text in CONTROL_WORDS or first.text in DECL_WORDS:
        return
    if first.kind == 'id' and len(toks) > 2 and (
            toks[1].kind == 'id' or (toks[1].text == '*' and toks[2].kind == 'id' and
                                     not spaced(ctx.line, toks[1]) and toks[2].start == toks[1].end)):
        return                                  # `T x ...;` or `T *x ...;`
    effect = any(t.text in ASSIGN_OPS or t.text in ('++', '--') for t in toks) or any(
        a.kind == 'id' and a.text not in NOT_OPERANDS and b.text == '(' for a, b in zip(toks, toks[1:]))
    if not effect:
        return
    prev = ctx.prev_code.strip()
    indent = ctx.line[:len(ctx.line) - len(ctx.line.lstrip())]
    if re.match(r'(else\b|do\b|(if|for|while|else\s+if)\s*\()', prev) and prev[-1:] not in (';', '{', '}'):
        # the body of a brace-less if/else/for: an empty line would let it
        # swallow the next statement, and `;` trips -Wempty-body
        yield 0, len(ctx.line), indent + '(void)0;', 'delete statement'
    elif prev[-1:] in (';', '{', '}', ':') or not prev:
        yield 0, len(ctx.line), '', 'delete statement'


OPERATOR_FUNCS = {'ret': op_ret, 'status': op_status, 'neg': op_neg, 'logic': op_logic,
                  'rel': op_rel, 'arith': op_arith, 'const': op_const, 'del': op_del}
assert list(OPERATOR_FUNCS) == list(OPERATORS)


@dataclasses.dataclass
class LineContext:
    line: str            # the original line
    tokens: list         # tokens of the masked line (offsets valid in `line`)
    prev_code: str       # the previous non-blank, non-preprocessor masked line
    statuses: list
    rng: random.Random


@dataclasses.dataclass
class Mutant:
    id: int
    op: str
    file: str
    line: int            # 1-based
    func: str
    before: str
    after: str
    what: str


def generate(sources, scope, statuses, seed):
    """Every candidate mutant of the target, duplicates removed."""
    rng = random.Random(f'{seed}:choices')      # which other status a swap picks
    seen, out = set(), []
    for src in sources:
        prev_code = ''
        lines = set(mutable_lines(src, scope))
        for i, masked in enumerate(src.masked):
            if src.preproc[i] or not masked.strip():
                continue
            if i in lines:
                ctx = LineContext(src.lines[i], tokenize(masked), prev_code, statuses, rng)
                for op, fn in OPERATOR_FUNCS.items():
                    for start, end, rep, what in fn(ctx):
                        after = ctx.line[:start] + rep + ctx.line[end:]
                        key = (src.path, i, after)
                        if after != ctx.line and key not in seen:
                            seen.add(key)
                            out.append(Mutant(0, op, src.path, i + 1, src.funcs[i] or '(file scope)',
                                              ctx.line, after, what))
            prev_code = masked
    return out


def regions_of(args):
    """The regions --area and --functions ask for: a list of (function
    regex, line regex or None), or None for the whole target."""
    regions = []
    for name in args.area or []:
        regions += AREAS[name]
    regions += [(f, None) for f in args.functions or []]
    return regions or None


def in_regions(candidates, sources, regions):
    """The candidates whose line lies in one of the regions. Filtering the
    full list (rather than generating less) keeps every mutant the same as
    in an unrestricted run; only the sample differs. A region that matches
    no code line is an error: it names a function that is gone, or a line
    pattern that no longer fits."""
    compiled = [(re.compile(f), re.compile(l) if l else None) for f, l in regions]
    used = [False] * len(compiled)

    def inside(src, index):
        func, code = src.funcs[index], src.masked[index]
        hit = False
        for k, (f, l) in enumerate(compiled):
            if func and f.fullmatch(func) and (l is None or l.search(code)):
                used[k] = hit = True
        return hit

    keep = {}
    for src in sources.values():
        for i in range(len(src.lines)):
            if not src.preproc[i] and src.masked[i].strip():
                keep[(src.path, i + 1)] = inside(src, i)
    stale = [regions[k] for k, u in enumerate(used) if not u]
    if stale:
        sys.exit('mutate: no code line matches ' + '; '.join(
            f'function {f!r}' + (f' with lines {l!r}' if l else '') for f, l in stale)
                 + ' (update AREAS in mutate.py, or the --functions given)')
    return [c for c in candidates if keep.get((c.file, c.line))]


def sample(candidates, count, seed):
    """Up to `count` mutants, stratified: operators take turns, and each
    turn goes to the function with the fewest mutants so far, so that no
    operator or function dominates. Deterministic for a seed, and a prefix
    of a larger sample (ids stay valid when --count changes)."""
    rng = random.Random(seed)
    buckets = collections.defaultdict(list)
    for c in candidates:
        buckets[(c.op, c.func)].append(c)
    for key in sorted(buckets):
        rng.shuffle(buckets[key])
    ops = [op for op in OPERATORS if any(o == op for o, _ in buckets)]
    rng.shuffle(ops)
    used = collections.Counter()
    chosen = []
    while len(chosen) < count and any(buckets.values()):
        for op in ops:
            funcs = sorted(f for (o, f), b in buckets.items() if o == op and b)
            if not funcs:
                continue
            fewest = min(used[f] for f in funcs)
            func = rng.choice([f for f in funcs if used[f] == fewest])
            m = buckets[(op, func)].pop()
            used[func] += 1
            chosen.append(dataclasses.replace(m, id=len(chosen) + 1))
            if len(chosen) == count:
                break
    return chosen


# ---------------------------------------------------------------------------
# The suite, read from the make rules
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class Command:
    check: str
    binary: str          # name under the build dir
    args: list
    env: dict
    network: bool

    def label(self):
        return ' '.join([self.binary] + self.args)


@dataclasses.dataclass
class Suite:
    binaries: list
    commands: list
    includes: str        # the makefile's INCS, to append after -I<mutant dir>
    overrides: dict      # make variables set on make's command line


def read_makefiles():
    """Variables and rules of Makefile + mk/*.mk: just enough of make to
    read the check targets (simple assignments, rules, tab recipes)."""
    variables, rules = {}, collections.defaultdict(lambda: {'prereqs': [], 'recipe': []})
    current = None
    for path in [REPO / 'Makefile'] + sorted((REPO / 'mk').glob('*.mk')):
        text = re.sub(r'\\\n', ' ', path.read_text())         # join continuation lines
        for line in text.split('\n'):
            if line.startswith('\t'):
                if current:
                    for target in current:
                        rules[target]['recipe'].append(line[1:])
                continue
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            var = re.match(r'^([A-Za-z_]\w*)\s*(\?=|:=|\+=|=)\s*(.*)$', line)
            rule = re.match(r'^([^:=#]+?)\s*:(?!=)\s*(.*)$', line)
            if var:
                name, how, value = var.groups()
                if how == '?=':
                    variables.setdefault(name, value)
                elif how == '+=':
                    variables[name] = (variables.get(name, '') + ' ' + value).strip()
                else:
                    variables[name] = value
                current = None
            elif rule:
                current = rule.group(1).split()
                for target in current:
                    rules[target]['prereqs'] += rule.group(2).split('|')[0].split()
            else:
                current = None
    return variables, rules


def expand(text, variables, overrides):
    """$(VAR) / ${VAR} expanded as make would (recursively); an unknown
    variable is an error, not a silent empty string."""
    def one(m):
        name = m.group(1) or m.group(2)
        if name in overrides:
            return overrides[name]
        if name not in variables:
            raise KeyError(name)
        return expand(variables[name], variables, overrides)
    return re.sub(r'(?<!\$)\$\((\w+)\)|(?<!\$)\$\{(\w+)\}', one, text).replace('$$', '$')


BUILD_MARK = '@BUILD@'
PARALLEL = 'scripts/parallel.sh'               # runs its arguments side by side
SHELL_STOP = re.compile(r'^(;|&&|\|\||\||&|then|do|fi|done|[0-9]*[<>].*)$')
SHELL_START = {None, ';', '&&', '||', '|', '&', 'then', 'do', 'else', 'if', '!', 'time'}


def commands_of(check, recipe_line, variables, overrides):
    """The $(BUILD)/<bin> invocations in one recipe line, with their
    arguments and NAME=value environment, cut at shell operators."""
    if '$(BUILD)/' not in recipe_line:
        return []                               # nothing of ours to run on this line
    line = expand(recipe_line.lstrip('@-+ \t'), variables, dict(overrides, BUILD=BUILD_MARK))
    line = re.sub(r'(?<=\s)\d+(?=[<>])', ' ', line)    # `2>&1`: the fd is no argument
    lexer = shlex.shlex(line, posix=True, punctuation_chars=';&|<>')
    lexer.whitespace_split = True
    words = list(lexer)
    found = []
    if PARALLEL in words:                       # each argument is a command line of its own
        for arg in words[words.index(PARALLEL) + 1:]:
            if SHELL_STOP.match(arg):
                break
            found += commands_of(check, arg.replace(BUILD_MARK, '$(BUILD)'), variables, overrides)
        return found
    for k, word in enumerate(words):
        if not word.startswith(BUILD_MARK + '/') or '$' in word:
            continue                            # not ours, or a shell loop variable
        env, before = {}, k - 1
        while before >= 0 and re.match(r'^[A-Za-z_]\w*=', words[before]):
            name, value = words[before].split('=', 1)
            env[name] = value
            before -= 1
        if (words[before] if before >= 0 else None) not in SHELL_START:
            continue                            # an argument (`-o $(BUILD)/x`), not a command
        args = []
        for w in words[k + 1:]:
            if SHELL_STOP.match(w):
                break
            args.append(w)
        found.append(Command(check, word[len(BUILD_MARK) + 1:], args, env, check in NETWORK_CHECKS))
    return found


def load_suite(target, suite_name, user_vars):
    """Binaries to build and commands to run for a suite, from mk/*.mk."""
    variables, rules = read_makefiles()
    overrides = dict(MAKE_OVERRIDES, **user_vars)
    binaries, commands = [], []
    for check in SUITES[target][suite_name]['checks']:
        rule = rules.get(check)
        if not rule or not rule['recipe']:
            sys.exit(f'mutate: no rule for {check} in Makefile or mk/*.mk; update SUITES in {__file__}')
        for p in rule['prereqs']:
            name = p.split('/', 1)[1] if p.startswith('$(BUILD)/') else None
            if name and name not in binaries:
                binaries.append(name)
        try:
            cmds = [c for line in rule['recipe'] for c in commands_of(check, line, variables, overrides)]
        except KeyError as e:
            sys.exit(f'mutate: {check} uses $({e.args[0]}), which mutate.py cannot expand (try --set {e.args[0]}=...)')
        cmds = [c for c in cmds if '--expect-violations' not in c.args]
        if not cmds:
            sys.exit(f'mutate: found no $(BUILD)/<binary> command in the recipe of {check}')
        binaries += [c.binary for c in cmds if c.binary not in binaries]
        commands += cmds
    try:
        includes = expand('$(INCS)', variables, overrides)
    except KeyError:
        includes = '-I. -Itests/shared'
    return Suite(binaries, commands, includes, overrides)


# ---------------------------------------------------------------------------
# Running: processes, network isolation, one mutant
# ---------------------------------------------------------------------------

RUNNING = set()                  # process groups we started, for Ctrl-C
RUNNING_LOCK = threading.Lock()
STOPPING = threading.Event()


def run_logged(argv, log, timeout, env=None):
    """Runs argv in its own process group (so a timeout also ends the
    redis-servers a test started), output appended to log. Returns
    (returncode or None on timeout, seconds)."""
    start = time.monotonic()
    with open(log, 'a') as out:
        out.write(f'$ {shlex.join(argv)}\n')
        out.flush()
        proc = subprocess.Popen(argv, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        with RUNNING_LOCK:
            RUNNING.add(proc.pid)
        try:
            rc = proc.wait(timeout=max(timeout, 0.1))
        except subprocess.TimeoutExpired:
            rc = None
            # the leader is not reaped yet, so the group is still ours
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        finally:
            with RUNNING_LOCK:
                RUNNING.discard(proc.pid)
    return rc, time.monotonic() - start


def interrupt(signum, frame):
    """SIGTERM ends a run the way Ctrl-C does: running tests are killed."""
    raise KeyboardInterrupt


def kill_running():
    with RUNNING_LOCK:
        for pgid in list(RUNNING):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def network_namespace():
    """A command prefix that runs a program in a private network namespace
    with its own loopback, or None when this machine does not allow it."""
    if not (shutil.which('unshare') and shutil.which('ip')):
        return None
    for prefix in (['unshare', '-n'], ['unshare', '-rn']):
        probe = subprocess.run(prefix + ['--', 'sh', '-c', 'ip link set lo up'], capture_output=True)
        if probe.returncode == 0:
            return prefix + ['--', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh']
    return None


@dataclasses.dataclass
class Result:
    outcome: str         # survived | killed | timeout | stillborn | cancelled
    seconds: float
    detail: str = ''     # which command killed it, and how
    times: list = dataclasses.field(default_factory=list)   # seconds per command run


class Runner:
    """Builds and runs the suite against one directory of headers."""

    def __init__(self, suite, netns):
        self.suite = suite
        self.netns = netns
        self.network_lock = threading.Lock()   # used only without netns
        self.budget = 3600.0                   # per mutant, until calibrate()
        self.limits = [3600.0] * len(suite.commands)

    def calibrate(self, times, floor):
        """Time limits from the unmutated run: the mutant's whole suite gets
        max(floor, 10x its time); each command also max(floor, 10x its own
        time), so a hang in a quick command is cut off long before a slow
        command's share of the budget has passed."""
        self.budget = max(floor, TIMEOUT_FACTOR * sum(times))
        self.limits = [max(floor, TIMEOUT_FACTOR * t) for t in times]

    def build(self, mutdir, log):
        """Builds the suite's binaries with make's own rules, the mutant
        directory first on the include path. True if they all built."""
        bindir = mutdir / 'bin'
        argv = (['make', '-s', '-B', '-k', '--no-print-directory']
                + [f'{k}={v}' for k, v in self.suite.overrides.items()]
                + [f'BUILD={bindir}', f'INCS=-I{mutdir} {self.suite.includes}']
                + [str(bindir / b) for b in self.suite.binaries])
        rc, _ = run_logged(argv, log, BUILD_TIMEOUT)
        return rc == 0

    def run(self, mutdir, log):
        """Runs the suite's commands in order until one fails."""
        bindir = mutdir / 'bin'
        tmp = mutdir / 'tmp'                    # redis node dirs: removed with the mutant
        tmp.mkdir(exist_ok=True)
        start, times = time.monotonic(), []
        unrepeated = 0
        for cmd, limit in zip(self.suite.commands, self.limits):
            if STOPPING.is_set():
                return Result('cancelled', time.monotonic() - start)
            env = dict(os.environ, TMPDIR=str(tmp), **cmd.env)
            argv = [str(bindir / cmd.binary)] + cmd.args
            left = min(limit, self.budget - (time.monotonic() - start))
            rc, took = self.execute(cmd, argv, log, left, env)
            if rc not in (None, 0) and cmd.network:
                # real servers and sockets on a loaded machine: a kill
                # counts only if the failure repeats
                with open(log, 'a') as f:
                    f.write('# failed on real sockets: run again, a kill must repeat\n')
                again, took2 = self.execute(cmd, argv, log, max(1.0, left - took), env)
                took += took2
                if again == 0:
                    unrepeated += 1
                    rc = 0
            times.append(took)
            if rc is None:
                return Result('timeout', time.monotonic() - start, cmd.label())
            if rc != 0:
                how = f'signal {-rc}' if rc < 0 else f'exit {rc}'
                return Result('killed', time.monotonic() - start, f'{cmd.label()}: {how}')
        return Result('survived', time.monotonic() - start,
                      f'{unrepeated} failure(s) that did not repeat' if unrepeated else '', times)

    def execute(self, cmd, argv, log, limit, env):
        """Runs one command: (exit status or None on timeout, seconds)."""
        if cmd.network and self.netns:
            return run_logged(self.netns + argv, log, limit, env)
        if cmd.network:
            with self.network_lock:
                return run_logged(argv, log, limit, env)
        return run_logged(argv, log, limit, env)


def write_tree(mutdir, snapshot, changed=None):
    """The target's headers (from the snapshot taken at start) under
    mutdir, with one file replaced by its mutated text."""
    if mutdir.exists():
        shutil.rmtree(mutdir)
    for path, text in snapshot.items():
        dest = mutdir / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(changed[1] if changed and changed[0] == path else text)


def judge(mutant, sources, snapshot, runner, keep):
    """Builds and runs one mutant in build/mutate/<id>/."""
    if STOPPING.is_set():
        return Result('cancelled', 0)
    mutdir = WORK / str(mutant.id)
    src = sources[mutant.file]
    write_tree(mutdir, snapshot, (mutant.file, src.with_line(mutant.line - 1, mutant.after)))
    log = mutdir / 'log.txt'
    start = time.monotonic()
    if not runner.build(mutdir, log):
        result = Result('stillborn', 0, 'does not compile')
    else:
        result = runner.run(mutdir, log)
    result.seconds = time.monotonic() - start          # build included: what a mutant costs
    if not keep:
        shutil.rmtree(mutdir, ignore_errors=True)
    return result


def check_shadowing(sources, snapshot, runner):
    """Poisons every target file and builds: each must fail to compile from
    its copy under build/mutate/shadow-check, which proves the mutants are
    what the tests include, not the originals."""
    mutdir = WORK / 'shadow-check'
    write_tree(mutdir, snapshot)
    for path in sources:
        (mutdir / path).write_text('#error mutate-shadow-check\n' + snapshot[path])
    log = mutdir / 'log.txt'
    runner.build(mutdir, log)
    output = log.read_text()
    # only the copies carry the marker, so any "<...>/path:1:" line with it counts
    missing = [p for p in sources
               if not re.search(rf'{re.escape(p)}:1:\S*.*mutate-shadow-check', output)]
    if missing:
        sys.exit(f'mutate: the suite does not include the mutant copies of {", ".join(missing)} '
                 f'(see {log}); the tests would run against the originals')
    shutil.rmtree(mutdir, ignore_errors=True)


def baseline(snapshot, runner):
    """The unmutated snapshot must build and pass; returns its times per command."""
    mutdir = WORK / 'baseline'
    write_tree(mutdir, snapshot)
    log = mutdir / 'log.txt'
    print('mutate: building and running the unmutated suite ...', flush=True)
    if not runner.build(mutdir, log):
        sys.exit(f'mutate: the unmutated sources do not build; fix that first (log: {log})\n'
                 + tail(log))
    result = runner.run(mutdir, log)
    if result.outcome != 'survived':
        sys.exit(f'mutate: the unmutated suite fails ({result.outcome}: {result.detail}); '
                 f'mutation testing needs a green suite (log: {log})\n' + tail(log))
    shutil.rmtree(mutdir, ignore_errors=True)
    return result.times


def tail(path, n=25):
    return ''.join(Path(path).read_text(errors='replace').splitlines(True)[-n:])


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------

def one_line_diff(m):
    return (f'--- a/{m.file}\n+++ b/{m.file}\n@@ -{m.line} +{m.line} @@\n'
            f'-{m.before}\n+{m.after}\n')


def score_of(counts):
    dead = counts['killed'] + counts['timeout']
    judged = dead + counts['survived']
    return f'{100.0 * dead / judged:5.1f}%' if judged else '    -'


def table(title, key, mutants, results):
    rows = collections.defaultdict(collections.Counter)
    for m in mutants:
        rows[key(m)][results[m.id].outcome] += 1
    width = max([len(title)] + [len(r) for r in rows])
    lines = [f'{title:<{width}}  mutants  stillborn  killed  timeout  survived  score']
    for name in sorted(rows):
        c = rows[name]
        lines.append(f'{name:<{width}}  {sum(c.values()):7}  {c["stillborn"]:9}  {c["killed"]:6}  '
                     f'{c["timeout"]:7}  {c["survived"]:8}  {score_of(c)}')
    return '\n'.join(lines)


def report(args, mutants, results, header, rerun):
    totals = collections.Counter(r.outcome for r in results.values())
    out = header + [
        f'generated {len(mutants)}  stillborn {totals["stillborn"]}  killed {totals["killed"]}  '
        f'timeouts {totals["timeout"]}  survived {totals["survived"]}  '
        f'score {score_of(totals).strip()} (killed+timeouts / killed+timeouts+survived)', '',
        table('operator', lambda m: m.op, mutants, results), '',
        table('function', lambda m: m.func, mutants, results), '']
    for kind in ('timeout', 'survived'):
        listed = [m for m in mutants if results[m.id].outcome == kind]
        if listed:
            out.append(f'{"timeouts (counted as killed)" if kind == "timeout" else "survivors"}: {len(listed)}')
            for m in listed:
                out.append(f'#{m.id} {m.op} {m.file}:{m.line} in {m.func}: {m.what}')
                out.append(one_line_diff(m))
    out.append(f're-run one: {rerun} --only ID[,ID] --keep   (needs the same sources, see the sha1 above)')
    return '\n'.join(out) + '\n'


def write_tsv(path, mutants, results):
    with open(path, 'w') as f:
        f.write('id\toperator\tfunction\tfile\tline\toutcome\tseconds\tdetail\n')
        for m in mutants:
            r = results[m.id]
            f.write(f'{m.id}\t{m.op}\t{m.func}\t{m.file}\t{m.line}\t{r.outcome}\t{r.seconds:.1f}\t{r.detail}\n')


def list_mutants(mutants):
    for m in mutants:
        print(f'#{m.id:<4} {m.op:<6} {m.file}:{m.line:<5} {m.func:<32} {m.what}')
        print(f'      - {m.before.strip()}\n      + {m.after.strip()}')


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(
        description='Mutation testing for redlock.h and its adapters (tests/mutate/README.md).',
        epilog='operators:\n' + '\n'.join(f'  {k:<7} {v}' for k, v in OPERATORS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--target', choices=sorted(TARGETS), default='core')
    p.add_argument('--suite', default='all', help='a suite of the target: ' + '; '.join(
        f'{t}: {", ".join(s)}' for t, s in SUITES.items()))
    p.add_argument('--count', type=int, default=300, help='mutants to sample (default 300)')
    p.add_argument('--seed', type=int, default=1, help='sampling seed (default 1)')
    p.add_argument('--jobs', type=int, default=os.cpu_count() or 1, help='mutants in parallel')
    p.add_argument('--timeout', type=float, default=DEFAULT_TIMEOUT,
                   help=f'at least this many seconds per mutant and per command (default {DEFAULT_TIMEOUT}; '
                        f'{TIMEOUT_FACTOR}x the unmutated time when longer)')
    p.add_argument('--area', help='core only: mutate only the code of these areas (comma-separated: '
                   + ', '.join(AREAS) + '; new = rw,owner,adopt,events)')
    p.add_argument('--functions', metavar='REGEX[,REGEX]',
                   help='mutate only functions whose whole name matches one of these regexes')
    p.add_argument('--list', action='store_true', help='print the sampled mutants, run nothing')
    p.add_argument('--only', help='run only these mutant ids (comma-separated)')
    p.add_argument('--keep', action='store_true', help='keep build/mutate/<id>/ (headers, binaries, log)')
    p.add_argument('--set', action='append', default=[], metavar='VAR=VALUE',
                   help='override a make variable the recipes use, e.g. --set SIM_RUNS=2000')
    args = p.parse_args()
    if args.suite not in SUITES[args.target]:
        p.error(f'target {args.target} has suites: {", ".join(SUITES[args.target])}')
    if any('=' not in s for s in args.set):
        p.error('--set takes VAR=VALUE')
    args.set = dict(s.split('=', 1) for s in args.set)
    if args.area:
        args.area = [a.strip() for a in args.area.split(',') if a.strip()]
        unknown = [a for a in args.area if a not in AREAS]
        if unknown:
            p.error(f'no area {", ".join(unknown)}; areas: {", ".join(AREAS)}')
        if args.target != 'core':
            p.error('--area names parts of redlock.h: only with --target core')
    if args.functions:
        args.functions = [f.strip() for f in args.functions.split(',') if f.strip()]
        for f in args.functions:
            try:
                re.compile(f)
            except re.error as e:
                p.error(f'--functions {f!r}: {e}')
    if args.only:
        try:
            args.only = sorted({int(x) for x in args.only.split(',') if x.strip()})
        except ValueError:
            p.error('--only takes mutant ids, e.g. --only 3,17')
    return args


def take_lock():
    """One run at a time owns build/mutate (mutant dirs are named by id)."""
    WORK.mkdir(parents=True, exist_ok=True)
    fd = os.open(WORK / '.lock', os.O_CREAT | os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors='replace').strip() or '?'
        sys.exit(f'mutate: another mutate.py run (pid {holder}) is using build/mutate')
    os.ftruncate(fd, 0)
    os.write(fd, f'{os.getpid()}\n'.encode())
    return fd


def main():
    args = parse_args()
    spec = TARGETS[args.target]
    files = SUITES[args.target][args.suite].get('files', spec['files'])
    # Everything is read once, now: the sources may change while we run.
    snapshot = {}
    for entry in spec['copy']:
        paths = sorted((REPO / entry).glob('*.h')) if (REPO / entry).is_dir() else [REPO / entry]
        for p in paths:
            snapshot[str(p.relative_to(REPO))] = p.read_text()
    sources = {path: Source.read(path) for path in files}
    statuses = status_names((REPO / 'redlock.h').read_text())
    digest = hashlib.sha1(''.join(snapshot[p] for p in files).encode()).hexdigest()[:12]

    candidates = generate(sources.values(), spec['scope'], statuses, args.seed)
    regions = regions_of(args)
    if regions:
        candidates = in_regions(candidates, sources, regions)
        if not candidates:
            sys.exit('mutate: no mutant in the regions asked for')
    count = max([args.count] + (args.only or []))
    mutants = sample(candidates, count, args.seed)
    if args.only:
        unknown = set(args.only) - {m.id for m in mutants}
        if unknown:
            sys.exit(f'mutate: no mutant {", ".join(map(str, sorted(unknown)))} (only {len(mutants)} sampled)')
        mutants = [m for m in mutants if m.id in args.only]
    if args.list:
        list_mutants(mutants)
        print(f'{len(mutants)} of {len(candidates)} candidates (sources sha1 {digest})')
        return 0

    restriction = ((['--area', ','.join(args.area)] if args.area else [])
                   + (['--functions', ','.join(args.functions)] if args.functions else []))
    lock = take_lock()
    suite = load_suite(args.target, args.suite, args.set)
    netns = network_namespace() if any(c.network for c in suite.commands) else None
    runner = Runner(suite, netns)
    check_shadowing(sources, snapshot, runner)
    times = baseline(snapshot, runner)
    runner.calibrate(times, args.timeout)
    isolation = ('network: each mutant in its own namespace (unshare)' if netns else
                 'network: tests that use ports run one at a time (no unshare)') if any(
        c.network for c in suite.commands) else 'network: not used'
    header = [
        f'mutation testing: target {args.target}, suite {args.suite}, seed {args.seed}, '
        f'{len(mutants)} mutants of {len(candidates)} candidates, {args.jobs} jobs',
        f'sources: {", ".join(files)} (sha1 {digest})' + (f', restricted: {shlex.join(restriction)}' if restriction else ''),
        'commands: ' + '; '.join(c.label() for c in suite.commands),
        f'unmutated run {sum(times):.1f} s ({", ".join(f"{t:.1f}" for t in times)}), timeout per mutant '
        f'{runner.budget:.0f} s (per command {", ".join(f"{t:.0f}" for t in runner.limits)}); {isolation}']
    print('\n'.join(header) + '\n', flush=True)

    signal.signal(signal.SIGTERM, interrupt)
    results, started = {}, time.monotonic()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        futures = {pool.submit(judge, m, sources, snapshot, runner, args.keep): m for m in mutants}
        for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            m, r = futures[fut], fut.result()
            results[m.id] = r
            print(f'[{n:>{len(str(len(mutants)))}}/{len(mutants)}] #{m.id:<4} {r.outcome:<9} {m.op:<6} '
                  f'{m.file}:{m.line} {m.func} ({r.seconds:.1f} s) {r.detail}', flush=True)
    except KeyboardInterrupt:
        STOPPING.set()
        kill_running()
        pool.shutdown(wait=True, cancel_futures=True)
        print('mutate: interrupted', file=sys.stderr)
        return 130
    pool.shutdown()

    header.append(f'wall time {time.monotonic() - started:.0f} s\n')
    rerun = (f'python3 tests/mutate/mutate.py --target {args.target} --suite {args.suite} --seed {args.seed}'
             + ''.join(' ' + shlex.quote(w) for w in restriction)
             + ''.join(f' --set {k}={v}' for k, v in args.set.items()))
    text = report(args, mutants, results, header, rerun)
    print('\n' + text, end='')
    name = (f'{args.target}-{args.suite}-{args.seed}' + (f'-{"+".join(args.area)}' if args.area else '')
            + ('-functions' if args.functions else '') + ('-only' if args.only else ''))
    (WORK / f'report-{name}.txt').write_text(text)
    write_tsv(WORK / f'results-{name}.tsv', mutants, results)
    print(f'mutate: wrote build/mutate/report-{name}.txt and build/mutate/results-{name}.tsv')
    os.close(lock)
    return 0


if __name__ == '__main__':
    sys.exit(main())
