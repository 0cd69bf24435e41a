# Shared by scripts/run and scripts/test: create .venv with Python >= 3.11 and install
# the project's three distributions (editable) with the given extras. Re-installs only when
# one of their pyproject.toml files changed.
VENV="${HEARTS_VENV:-.venv}"

pick_python() {
    for candidate in "${PYTHON:-}" python3.11 python3 python; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    echo "error: Python 3.11 or newer is needed (set PYTHON=/path/to/python3.11)" >&2
    return 1
}

# The three distributions, lowest first: the engine, the client (which needs the
# engine), the daemon (which needs both); pip resolves them from these folders.
PROJECTS="engine/pyproject.toml clients/python/pyproject.toml pyproject.toml"

ensure_venv() {
    local extras="$1" stamp project stale=""
    if [ ! -x "$VENV/bin/python" ]; then
        "$(pick_python)" -m venv "$VENV"
    fi
    stamp="$VENV/.installed-$extras"
    for project in $PROJECTS; do
        if [ ! -f "$stamp" ] || [ "$project" -nt "$stamp" ]; then
            stale=1
        fi
    done
    if [ -n "$stale" ]; then
        # Metadata the one-distribution layout left at the root would shadow the daemon's
        # (pytest puts the root on sys.path), hiding its `heartsbot local` entry point.
        rm -rf hearts_arena.egg-info
        echo "setting up $VENV: installing the project and compiling its hot modules (about 2 minutes the first time;" \
             "the build's own warnings may scroll by)" >&2
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
        engine_build_env "$VENV/bin/python" -m pip install --quiet -e ./engine -e ./clients/python -e ".${extras:+[$extras]}"
        touch "$stamp" "$VENV/.engine-built"
    fi
}

engine_build_env() {
    # Run "$@" (an install of ./engine or of the daemon) so that, where a C compiler exists, a
    # failed compile of the hot modules fails the install instead of quietly leaving the
    # pure-Python package (engine/setup.py, setup.py): the tests must really test the compiled path.
    if command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1; then
        HEARTS_ENGINE_REQUIRE_COMPILED=1 HEARTSD_REQUIRE_COMPILED=1 "$@"
    else
        echo "note: no C compiler: the engine and the daemon are installed pure-Python only" >&2
        "$@"
    fi
}

stale_build() {
    # Why the compiled build of the package in folder $1 (pure switch $2) must be made again,
    # or nothing (hearts_engine/_select.py decides, as at import).
    env -u "$2" "$VENV/bin/python" - "$1" "$2" <<'PY'
import importlib.util, pathlib, sys
spec = importlib.util.spec_from_file_location("_select", "engine/hearts_engine/_select.py")
select = importlib.util.module_from_spec(spec)
spec.loader.exec_module(select)
print(select.reason_for_sources(pathlib.Path(sys.argv[1]), sys.argv[2]) or "")
PY
}

ensure_engine_build() {
    # The editable engine and daemon are compiled in place (extension modules beside the
    # sources). After an edit of a compiled module's source, or of a build, compile again:
    # otherwise the package runs the edited sources (hearts_engine/_select.py) and the
    # compiled pass of the tests would not test compiled code.
    local stamp="$VENV/.engine-built" stale
    stale=$(stale_build engine/hearts_engine HEARTS_ENGINE_PURE)
    if [ -n "$stale" ] || [ ! -f "$stamp" ] || [ engine/setup.py -nt "$stamp" ] || [ engine/pyproject.toml -nt "$stamp" ] ||
        [ engine/mypyc_build.py -nt "$stamp" ]; then
        echo "compiling the engine (${stale:-the build changed})..." >&2
        engine_build_env "$VENV/bin/python" -m pip install --quiet --no-deps -e ./engine
    fi
    stale=$(stale_build server/heartsd HEARTSD_PURE)
    if [ -n "$stale" ] || [ ! -f "$stamp" ] || [ setup.py -nt "$stamp" ] || [ engine/mypyc_build.py -nt "$stamp" ]; then
        echo "compiling the daemon's encoders (${stale:-the build changed})..." >&2
        engine_build_env "$VENV/bin/python" -m pip install --quiet --no-deps -e .
    fi
    touch "$stamp"
}

engine_is_compiled() {
    env -u HEARTS_ENGINE_PURE "$VENV/bin/python" -c 'import sys, hearts_engine; sys.exit(not hearts_engine.COMPILED)'
}

ensure_node_tools() {
    # Node packages the tests use, each pinned by its package-lock.json: buf (proto lint)
    # in tools/buf, and the Node bot's gRPC libraries in clients/node.
    local dir stamp
    if ! command -v npm >/dev/null 2>&1; then
        echo "warning: npm not found; the proto lint and Node bot tests will fail (install Node.js 20)" >&2
        return 0
    fi
    for dir in tools/buf clients/node; do
        stamp="$dir/node_modules/.installed"
        if [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
            npm ci --prefix "$dir" --silent --no-audit --no-fund
            touch "$stamp"
        fi
    done
}

ensure_postgres() {
    # The store and ladder tests run against a real PostgreSQL server (tests/postgres.py
    # starts a throwaway cluster). Debian's package provides initdb and pg_ctl.
    if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        return 0
    fi
    apt_install postgresql "PostgreSQL" "the PostgreSQL tests"
}

apt_install() {
    # apt_install PACKAGE WHAT NEEDED_BY: install a Debian package as root (apt-get update
    # first if the package lists are stale), or say what will fail without it.
    local package="$1" what="$2" needed_by="$3"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing $what (Debian's $package package) for $needed_by..." >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" >/dev/null ||
            { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" >/dev/null; }
    else
        echo "warning: $what is not installed; $needed_by will fail (apt-get install $package)" >&2
    fi
}

ensure_chromium() {
    # The browser tests drive Debian's Chromium through Playwright (never a browser that
    # Playwright downloads: it cannot be fetched here). Installed like PostgreSQL.
    if [ -x /usr/bin/chromium ]; then
        return 0
    fi
    apt_install chromium "Chromium" "the browser tests"
}
