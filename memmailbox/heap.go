package memmailbox

// sifter is a binary heap kept in a slice by its own less and swap (each
// heap keeps its elements' positions up to date in swap): groupHeap and
// timeHeap. The sift functions are written once, for both.
type sifter interface {
	less(i, j int) bool
	swap(i, j int)
}

// siftUp moves the element at i up while it is less than its parent.
func siftUp[H sifter](h H, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// siftDown moves the element at i of a heap of n down while a child is
// less than it, and reports whether it moved.
func siftDown[H sifter](h H, n, i int) bool {
	start := i
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}
