# pkgs.sh: which Debian packages lockstorm needs, read off the build itself
# (sourced by tests that check an install list: the Dockerfile, the .deb's
# Depends, the CI examples). Each function prints package names, one a line.

# lib_packages BINARY: the packages of the shared libraries BINARY names
# (NEEDED), not what those pull in; libc (in every base system) and an ASan
# build's sanitizer runtimes (never shipped) left out
lib_packages() {
    local needed lib pkg
    needed=" $(objdump -p "$1" | awk '/NEEDED/ {print $2}' | tr '\n' ' ') "
    for lib in $(ldd "$1" | awk -v n="$needed" '/=> \// && index(n, " " $1 " ") {print $3}'); do
        pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -n1 | cut -d: -f1 || true)
        [ -n "$pkg" ] || pkg=$(dpkg -S "$lib" 2>/dev/null | head -n1 | cut -d: -f1 || true)
        case $pkg in ''|libc6|libgcc-s1|libasan*|libubsan*|libstdc++*) ;; *) echo "$pkg" ;; esac
    done | sort -u
}

# dev_packages CMAKELISTS: the packages of the pkg-config modules it
# requires (pkg_check_modules(... REQUIRED ... module)); "?module" for a
# module no installed package provides
dev_packages() {
    local m pc pkg
    for m in $(grep -oE 'pkg_check_modules\([A-Za-z_]+ REQUIRED( IMPORTED_TARGET)? [^ )]+' "$1" |
               awk '{print $NF}'); do
        pc=$(pkg-config --variable=pcfiledir "$m" 2>/dev/null || true)/$m.pc
        pkg=$(dpkg -S "$(readlink -f "$pc")" 2>/dev/null | head -n1 | cut -d: -f1 || true)
        [ -n "$pkg" ] || pkg=$(dpkg -S "$pc" 2>/dev/null | head -n1 | cut -d: -f1 || true)
        echo "${pkg:-?$m}"
    done | sort -u
}
