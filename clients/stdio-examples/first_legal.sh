#!/bin/sh
# The simplest stdio bot (docs/stdio.md), in POSIX sh: play the first legal card,
# pass the first `count` legal cards, take the default moon option.
#   heartsbot stdio --server HOST:PORT --token TOKEN --name NAME -- sh first_legal.sh
set -f  # the fields hold no wildcards, but never expand any
read -r greeting || exit 0
if [ "$greeting" != "hearts 1" ]; then
    echo "first_legal.sh: unknown protocol '$greeting'" >&2
    exit 1
fi
echo ok
while read -r kind match fields; do
    legal= count= default=
    for field in $fields; do
        case $field in
            legal=*) legal=${field#legal=} ;;
            count=*) count=${field#count=} ;;
            default=*) default=${field#default=} ;;
        esac
    done
    case $kind in
        pass)
            IFS=,; set -- $legal; unset IFS
            answer=pass
            while [ "$count" -gt 0 ]; do answer="$answer $1"; shift; count=$((count - 1)); done
            echo "$answer" ;;
        play) echo "play ${legal%%,*}" ;;
        moon) echo "moon $default" ;;
        *) ;;  # "end" and any information line a later version adds: never answered
    esac
done
