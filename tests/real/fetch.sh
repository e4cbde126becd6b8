#!/bin/bash
# fetch.sh CACHE PACKAGE
#
# Unpack the Debian source package PACKAGE (apt-get source) into
# CACHE/src/PACKAGE and print that directory. Idempotent: a package already
# unpacked there is reused (CACHE/src/PACKAGE/.fetched marks a complete
# unpack), so reruns of the suite do not go to the network. When the newest
# version cannot be downloaded (a mirror may answer 404 for a security
# update's files while it has the release's), each older version that
# apt-cache showsrc lists is tried in turn, newest first.
#
# When apt has no deb-src entry for the machine's Debian archive, this
# enables one: it writes /etc/apt/sources.list.d/fdrtrace-deb-src.sources
# with a deb-src stanza for each enabled Debian deb source it finds (in
# deb822 *.sources files and one-line *.list files), leaving the machine's
# own files untouched, then runs apt-get update. That needs root.
#
# Exit status: 0 with the directory on stdout; 77 (the suite's "skip")
# with the reason on stdout when the sources cannot be had (no apt, not
# root, no network, package unknown); 1 on other errors.
set -eu

cache=$1 pkg=$2
mkdir -p "$cache/src"
cache=$(cd "$cache" && pwd)	# absolute: apt-get source runs elsewhere
dest=$cache/src/$pkg
skip() { echo "SKIP: cannot fetch the source of $pkg: $*"; exit 77; }

# the marker's own directory: a cache moved or copied elsewhere still works
if [ -f "$dest/.fetched" ]; then
	echo "$dest"
	exit 0
fi

command -v apt-get >/dev/null || skip "apt-get is not installed (not a Debian system)"
command -v dpkg-source >/dev/null || skip "dpkg-source is not installed (apt-get install dpkg-dev)"

# Serialise apt and the unpack between tests that run at the same time.
exec 9>"$cache/.fetch.lock"
flock 9
if [ -f "$dest/.fetched" ]; then
	echo "$dest"
	exit 0
fi

has_src() { apt-cache showsrc "$pkg" 2>/dev/null | grep -q '^Package: '; }

# apt_retry CMD...: apt and dpkg hold locks while another apt runs; wait
# for them for up to five minutes rather than fail.
apt_retry() {
	local i
	for i in $(seq 1 60); do
		if "$@" >"$cache/apt.log" 2>&1; then
			return 0
		fi
		grep -q 'Could not get lock\|Unable to lock\|is another process using it' \
			"$cache/apt.log" || return 1
		sleep 5
	done
	return 1
}

enable_deb_src() {
	local out=/etc/apt/sources.list.d/fdrtrace-deb-src.sources tmp
	tmp=$(mktemp)
	# deb822 stanzas: copy each enabled one whose Types has deb but not
	# deb-src and whose URIs are a Debian archive, as a deb-src stanza.
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && [ "$f" != "$out" ] || continue
		awk -v RS= '
			{
				n = split($0, l, "\n"); deb = 0; src = 0; off = 0; debian = 0
				for (i = 1; i <= n; i++) {
					if (l[i] ~ /^[Tt]ypes:/) {
						deb = (" " l[i] " ") ~ /[ \t]deb[ \t]/
						src = l[i] ~ /deb-src/
					}
					if (l[i] ~ /^[Ee]nabled:[ \t]*no/) off = 1
					if (l[i] ~ /^URIs:.*debian/) debian = 1
				}
				if (!deb || src || off || !debian) next
				for (i = 1; i <= n; i++) {
					if (l[i] ~ /^#/) continue
					if (l[i] ~ /^[Tt]ypes:/) l[i] = "Types: deb-src"
					print l[i]
				}
				print ""
			}' "$f" >>"$tmp"
	done
	# One-line format: "deb [opts] URI suite comp..." lines of a Debian archive.
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[ \t]*deb\([ \t].*debian.*\)$/\1/p' "$f" | while read -r rest; do
			# "[opts] URI suite comps" -> a deb822 stanza would need
			# parsing of options; a .list line is simpler.
			echo "deb-src $rest" >>"$tmp.list"
		done
	done
	if [ ! -s "$tmp" ] && [ ! -s "$tmp.list" ]; then
		rm -f "$tmp" "$tmp.list"
		return 1
	fi
	if [ -s "$tmp" ]; then
		{ echo "# Written by fdrtrace tests/real/fetch.sh: deb-src for the Debian"
		  echo "# archive configured on this machine, so that apt-get source works."
		  cat "$tmp"; } >"$out"
	fi
	if [ -s "$tmp.list" ]; then
		{ echo "# Written by fdrtrace tests/real/fetch.sh (deb-src for apt-get source)"
		  cat "$tmp.list"; } >"${out%.sources}.list"
	fi
	rm -f "$tmp" "$tmp.list"
	echo "fetch.sh: enabled deb-src in ${out%.sources}.*" >&2
	return 0
}

if ! has_src; then
	if ! ls /var/lib/apt/lists/*Sources* >/dev/null 2>&1; then
		[ "$(id -u)" = 0 ] || skip "apt has no deb-src entry and enabling one needs root"
		[ -e /etc/apt/sources.list.d/fdrtrace-deb-src.sources ] ||
			[ -e /etc/apt/sources.list.d/fdrtrace-deb-src.list ] ||
			enable_deb_src || skip "no Debian archive found in the apt sources"
	fi
	[ "$(id -u)" = 0 ] || skip "the deb-src lists are not downloaded and apt-get update needs root"
	echo "fetch.sh: apt-get update (for the deb-src lists)" >&2
	apt_retry apt-get update -qq || skip "apt-get update failed: $(tail -3 "$cache/apt.log")"
	has_src || skip "apt knows no source package $pkg"
fi

# versions: "SOURCE=VERSION" for each source package version apt-cache
# showsrc lists for $pkg (a binary package's name gives its source's),
# newest first by dpkg's ordering.
versions() {
	local list=() p v i j t
	while read -r p v; do
		list+=("$p=$v")
	done < <(apt-cache showsrc "$pkg" 2>/dev/null |
		awk '/^Package: / { p = $2 } /^Version: / { print p, $2 }' | sort -u)
	# an insertion sort: a few entries, compared as dpkg does
	for ((i = 1; i < ${#list[@]}; i++)); do
		t=${list[i]}
		for ((j = i - 1; j >= 0; j--)); do
			dpkg --compare-versions "${list[j]#*=}" lt "${t#*=}" || break
			list[j + 1]=${list[j]}
		done
		list[j + 1]=$t
	done
	printf '%s\n' "${list[@]}"
}

# get_source: apt-get source of the newest version; when that fails (a
# mirror may lack the newest, e.g. a security update's files answering 404
# while the release's are there), each older version apt-cache showsrc
# lists, newest first, until one downloads.
get_source() {
	local v tried=""
	rm -rf "$cache/dl-$pkg"
	mkdir -p "$cache/dl-$pkg"
	( cd "$cache/dl-$pkg" && apt_retry apt-get source -qq "$pkg" ) && return 0
	cp "$cache/apt.log" "$cache/apt-newest.log"
	for v in $(versions); do
		rm -rf "$cache/dl-$pkg"
		mkdir -p "$cache/dl-$pkg"
		echo "fetch.sh: apt-get source $pkg failed; trying $v" >&2
		if ( cd "$cache/dl-$pkg" && apt_retry apt-get source -qq "$v" ); then
			return 0
		fi
		tried="$tried $v"
	done
	echo "apt-get source $pkg: $(tail -3 "$cache/apt-newest.log");" \
		"older versions tried:${tried:- none listed}"
	return 1
}

why=$(get_source) || skip "$why"
dir=$(find "$cache/dl-$pkg" -mindepth 1 -maxdepth 1 -type d | head -1)
[ -n "$dir" ] || skip "apt-get source unpacked nothing"
rm -rf "$dest"
mv "$dir" "$dest"
ver=$(cd "$cache/dl-$pkg" && ls *.dsc 2>/dev/null | head -1)
rm -rf "$cache/dl-$pkg"
echo "$dest" >"$dest/.fetched.tmp"
mv "$dest/.fetched.tmp" "$dest/.fetched"
echo "fetch.sh: $pkg unpacked from ${ver:-its .dsc} into $dest" >&2
echo "$dest"
