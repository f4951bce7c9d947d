#!/usr/bin/env bash
# Build Batsim 4.2.1 and batsched, for benchmarks/bench_batsim.py, in a folder outside the
# repository (nothing of theirs is kept in sitesim):
#
#     bash benchmarks/peers/build_batsim.sh [WORK]        # WORK: default $SITESIM_PEERS/batsim
#
# It installs Debian's SimGrid 3.32 and the small libraries Batsim and batsched need
# (apt-get, when run as root; otherwise it says which packages are missing), takes the sources
# from git snapshots of their public repositories, and builds with meson/ninja (release):
#
#   WORK/prefix/bin/batsim    Batsim v4.2.1            github oar-team/batsim, tag v4.2.1
#   WORK/prefix/bin/batsched  batsched 1.4.0+ (1707277) the commit Batsim 4.2.1's default.nix
#                             pins (framagit batsim/batsched); its history is reached through
#                             the GitHub fork hpc/batsched4, which holds upstream's commits
#   WORK/prefix/bin/batsched-busy-first   the same with reservations on busy machines first
#                             (benchmarks/peers/batsched_busy_first.py), to explain differences
#   redox (hmartiro/redox, last commit), loguru v2.1.0 (emilk/loguru): libraries they link
#   intervalset               benchmarks/peers/intervalset/: a stand-in written for this
#                             benchmark (the library's framagit repository cannot be fetched)
#
# The snapshots are bare git directories under $SITESIM_MIRROR (default /work/.mirror), one
# per repository, named OWNER+NAME/repo (any `git clone --mirror` of the repository will do).
# Exit status: 0 built (or already built), 3 cannot be built here (the reason on stderr),
# anything else a failed build (see WORK/logs/).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEERS="${SITESIM_PEERS:-/work/peers}"
WORK="$(realpath -m "${1:-$PEERS/batsim}")"
MIRROR="${SITESIM_MIRROR:-/work/.mirror}"
PREFIX="$WORK/prefix"
LOGS="$WORK/logs"

BATSIM_REF=v4.2.1
BATSCHED_REF=17072778995100fc90214ea4910bf5b171adfd0d
LOGURU_REF=v2.1.0
REDOX_REF=HEAD

DEBS=(libsimgrid-dev libboost-dev libboost-locale-dev libboost-regex-dev libboost-system-dev
      rapidjson-dev libdocopt-dev libpugixml-dev libzmq3-dev libhiredis-dev libev-dev
      libgmp-dev meson ninja-build pkg-config cmake g++ git)

cannot() { echo "build_batsim.sh: cannot build Batsim here: $*" >&2; exit 3; }
step() { echo "== $*" >&2; }

# -- 1. Debian packages ----------------------------------------------------------------------
missing=()
for deb in "${DEBS[@]}"; do
    dpkg-query -W -f='${Status}' "$deb" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$deb")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
        cannot "missing Debian packages (install them as root): ${missing[*]}"
    fi
    step "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q "${missing[@]}" >&2 \
        || { apt-get update -q >&2 && apt-get install -y -q "${missing[@]}" >&2; } \
        || cannot "apt-get install ${missing[*]} failed"
fi
simgrid="$(pkg-config --modversion simgrid 2>/dev/null || true)"
[[ -n $simgrid ]] || cannot "no SimGrid (pkg-config simgrid) after installing libsimgrid-dev"

# -- 2. Sources ------------------------------------------------------------------------------
mkdir -p "$WORK/src" "$LOGS" "$PREFIX"
extract() {  # extract NAME OWNER+REPO REF: WORK/src/NAME from the snapshot, once
    local name=$1 repo=$2 ref=$3 git_dir="$MIRROR/$2/repo"
    [[ -d $git_dir ]] || cannot "no snapshot of github ${repo/+//} in $git_dir (make one: git clone --mirror)"
    local commit
    commit="$(git --git-dir="$git_dir" rev-parse --verify -q "$ref^{commit}")" \
        || cannot "github ${repo/+//} has no $ref in $git_dir"
    if [[ -f $WORK/src/$name/COMMIT && $(cat "$WORK/src/$name/COMMIT") == "$commit" ]]; then
        return
    fi
    rm -rf "$WORK/src/$name" && mkdir -p "$WORK/src/$name"
    git --git-dir="$git_dir" archive "$commit" | tar -x -C "$WORK/src/$name"
    echo "$commit" > "$WORK/src/$name/COMMIT"
}
extract batsim oar-team+batsim "$BATSIM_REF"
extract batsched hpc+batsched4 "$BATSCHED_REF"
extract redox hmartiro+redox "$REDOX_REF"
extract loguru emilk+loguru "$LOGURU_REF"

export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$PREFIX/lib/pkgconfig" "$PREFIX/include"

pc() {  # pc NAME VERSION CFLAGS LIBS: a pkg-config file for a library installed without one
    cat > "$PREFIX/lib/pkgconfig/$1.pc" <<EOF
Name: $1
Description: $1, installed by build_batsim.sh
Version: $2
Cflags: $3
Libs: $4
EOF
}

run() {  # run LOG COMMAND...: the command's output to WORK/logs/LOG, its tail on failure
    if ! "${@:2}" > "$LOGS/$1" 2>&1; then
        tail -n 30 "$LOGS/$1" >&2
        echo "build_batsim.sh: failed: ${*:2} (log: $LOGS/$1)" >&2
        exit 1
    fi
}

meson_build() {  # meson_build NAME SOURCE_DIR: configure, build and install into PREFIX
    local build="$WORK/build/$1"
    local again=()
    if [[ -f $build/build.ninja ]]; then  # the dependencies may have changed
        run "$1-clearcache.log" meson configure --clearcache "$build"
        again=(--reconfigure)
    fi
    run "$1-setup.log" meson setup "${again[@]}" "$build" "$2" --prefix "$PREFIX" --libdir lib \
        --buildtype release
    run "$1-build.log" ninja -C "$build"
    run "$1-install.log" ninja -C "$build" install
}

# -- 3. Libraries ----------------------------------------------------------------------------
step "intervalset (stand-in: benchmarks/peers/intervalset)"
meson_build intervalset "$HERE/intervalset"
run intervalset-check.log g++ -std=c++17 -I"$PREFIX/include" "$HERE/intervalset/check.cpp" \
    -L"$PREFIX/lib" -Wl,-rpath,"$PREFIX/lib" -lintervalset -o "$WORK/build/intervalset/check"
run intervalset-check-run.log "$WORK/build/intervalset/check"

if [[ ! -f $PREFIX/lib/libloguru.so ]]; then
    step "loguru $LOGURU_REF"
    cp "$WORK/src/loguru/loguru.hpp" "$PREFIX/include/"
    run loguru.log g++ -std=c++11 -O2 -fPIC -shared -DLOGURU_WITH_STREAMS=1 \
        "$WORK/src/loguru/loguru.cpp" -o "$PREFIX/lib/libloguru.so" -lpthread -ldl
    pc loguru "${LOGURU_REF#v}" "-I$PREFIX/include -DLOGURU_WITH_STREAMS=1" \
        "-L$PREFIX/lib -Wl,-rpath,$PREFIX/lib -lloguru -lpthread -ldl"
fi

redox_lib="$(dirname "$(ls "$PREFIX"/lib*/libredox.so 2>/dev/null | head -n 1)")"
if [[ $redox_lib == . ]]; then
    step "redox"
    run redox-cmake.log cmake -S "$WORK/src/redox" -B "$WORK/build/redox" \
        -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_BUILD_TYPE=Release -Dstatic_lib=OFF
    run redox-build.log cmake --build "$WORK/build/redox" -j "$(nproc)"
    run redox-install.log cmake --install "$WORK/build/redox"
    redox_lib="$(dirname "$(ls "$PREFIX"/lib*/libredox.so | head -n 1)")"  # lib64 on x86-64
fi
pc redox 0.3 "-I$PREFIX/include" \
    "-L$redox_lib -Wl,-rpath,$redox_lib -lredox -lhiredis -lev -lpthread"

# Debian's libdocopt-dev ships CMake files but no pkg-config file.
pc docopt 0.6.3 "-I/usr/include/docopt" "-ldocopt"

# -- 4. Batsim and batsched ------------------------------------------------------------------
export LDFLAGS="-Wl,-rpath,$PREFIX/lib ${LDFLAGS:-}"
step "Batsim $BATSIM_REF against SimGrid $simgrid"
meson_build batsim "$WORK/src/batsim"
step "batsched ${BATSCHED_REF:0:7}"
meson_build batsched "$WORK/src/batsched"

# batsched with busy-first reservations (see batsched_busy_first.py), beside the original.
step "batsched ${BATSCHED_REF:0:7} with busy-first reservations"
busy="$WORK/src/batsched-busy-first"
if [[ ! -f $busy/COMMIT || $(cat "$busy/COMMIT") != "$(cat "$WORK/src/batsched/COMMIT")" ]]; then
    rm -rf "$busy" && cp -r "$WORK/src/batsched" "$busy"
    rm -f "$busy/COMMIT"  # written once the edit has applied
    run busy-first-edit.log python3 "$HERE/batsched_busy_first.py" "$busy"
    cp "$WORK/src/batsched/COMMIT" "$busy/COMMIT"
fi
if [[ ! -f $WORK/build/batsched-busy-first/build.ninja ]]; then
    run batsched-busy-first-setup.log meson setup "$WORK/build/batsched-busy-first" "$busy" \
        --prefix "$PREFIX" --libdir lib --buildtype release
fi
run batsched-busy-first-build.log ninja -C "$WORK/build/batsched-busy-first"
cp "$WORK/build/batsched-busy-first/batsched" "$PREFIX/bin/batsched-busy-first"

"$PREFIX/bin/batsim" --version >/dev/null || cannot "the built batsim does not run"
"$PREFIX/bin/batsched" --help >/dev/null || cannot "the built batsched does not run"
"$PREFIX/bin/batsched-busy-first" --help >/dev/null || cannot "batsched-busy-first does not run"
{
    echo "batsim $BATSIM_REF $(cat "$WORK/src/batsim/COMMIT")"
    echo "batsched $(cat "$WORK/src/batsched/COMMIT")"
    echo "simgrid $simgrid"
} > "$PREFIX/VERSIONS"
echo "$PREFIX/bin"
