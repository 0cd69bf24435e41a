# A stdio bot in awk (docs/stdio.md): follow suit as low as possible, throw the highest
# card when void, lead the lowest; pass the highest-ranked cards; default moon option.
#   heartsbot stdio ... -- gawk -f lowest.awk
#   heartsbot stdio ... -- mawk -W interactive -f lowest.awk   (mawk buffers a pipe without it)
function rank(card) { return index("23456789TJQKA", substr(card, 1, 1)) }
function answer(line) { print line; fflush() }

NR == 1 {
    if ($0 != "hearts 1") { print "lowest.awk: unknown protocol: " $0 > "/dev/stderr"; exit 1 }
    answer("ok")
    next
}
{
    split("", f)
    for (i = 3; i <= NF; i++) { eq = index($i, "="); f[substr($i, 1, eq - 1)] = substr($i, eq + 1) }
    n = split(f["legal"], legal, ",")
}
$1 == "play" {
    led = substr(f["trick"], 2, 1)  # the suit led ("" when we lead)
    low = ""; high = ""
    for (i = 1; i <= n; i++) {
        c = legal[i]
        if (led != "" && substr(c, 2, 1) == led) { if (low == "" || rank(c) < rank(low)) low = c }
        if (high == "" || rank(c) > rank(high)) high = c
    }
    if (low == "") {  # leading (lead the lowest) or void in the suit led (throw the highest)
        if (led != "") low = high
        else for (i = 1; i <= n; i++) if (low == "" || rank(legal[i]) < rank(low)) low = legal[i]
    }
    answer("play " low)
}
$1 == "pass" {
    out = "pass"
    split("", taken)
    for (k = 0; k < f["count"]; k++) {
        best = 0
        for (i = 1; i <= n; i++) if (!(i in taken) && (best == 0 || rank(legal[i]) > rank(legal[best]))) best = i
        taken[best] = 1; out = out " " legal[best]
    }
    answer(out)
}
$1 == "moon" { answer("moon " f["default"]) }
