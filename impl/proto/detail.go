package proto

import "strconv"

func lengthDetail(lo, hi int64) string {
	return "length must be " + strconv.FormatInt(lo, 10) + ".." + strconv.FormatInt(hi, 10) + " bytes"
}

func rangeDetail(lo, hi int64) string {
	return "must be in " + strconv.FormatInt(lo, 10) + ".." + strconv.FormatInt(hi, 10)
}
