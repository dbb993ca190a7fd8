package clip

// Nearest returns the name within edit distance 2 of s (the nearest, the
// first in order on a tie), or "": the "did you mean" of messages about a
// mistyped name, at the distance cobra uses for commands.
func Nearest(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := EditDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance between a and b, in bytes.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
