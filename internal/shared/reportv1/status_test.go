package reportv1

import "testing"

func TestWorst(t *testing.T) {
	t.Parallel()
	if Worst(Pass, Skip, Warn) != Warn || Worst(Warn, Error) != Error || Worst(Error, Fail) != Fail {
		t.Error("wrong ordering")
	}
	if Worst("") != Error || Status("").Valid() {
		t.Error("a zero status must rank as an error")
	}
	if Worst() != Skip {
		t.Error("no statuses must be skip")
	}
	for i, s := range Statuses {
		if !s.Valid() || s.Rank() != i {
			t.Errorf("%s ranks %d, listed %d", s, s.Rank(), i)
		}
	}
}

func TestOverall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []Status
		want Status
	}{
		{nil, Skip},
		{[]Status{Skip, Skip}, Skip},
		{[]Status{Pass, Skip}, Pass},
		{[]Status{Skip, Warn, Pass}, Warn},
		{[]Status{Fail, Skip, Error}, Fail},
		{[]Status{Skip, "bogus"}, Error},
	} {
		if got := Overall(tc.in...); got != tc.want {
			t.Errorf("Overall(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
