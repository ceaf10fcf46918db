package codecv4

// Go's small-object size classes (runtime/sizeclasses.go). allocSize uses
// them to charge what an allocation really takes from the heap.
var sizeClasses = [...]int{0, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192,
	208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024,
	1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144,
	6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072,
	20480, 21760, 24576, 27264, 28672, 32768}

// allocSize returns the heap footprint of an n-byte allocation: the size
// class for small objects, whole 8 KiB pages for large ones.
func allocSize(n int) int64 {
	if n <= 0 {
		return 0
	}
	if n > 32768 {
		return (int64(n) + 8191) &^ 8191
	}
	lo, hi := 1, len(sizeClasses)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if sizeClasses[mid] >= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return int64(sizeClasses[lo])
}
