package blockid

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
)

// TestPartitionTableRealImages compares ReadPartitionTable with partx and
// blkid output recorded when the images were made by sfdisk.
func TestPartitionTableRealImages(t *testing.T) {
	for _, name := range []string{"gpt", "dos"} {
		t.Run(name, func(t *testing.T) {
			pt, err := ReadPartitionTable(bytes.NewReader(fixture(t, name)), 512)
			if err != nil {
				t.Fatal(err)
			}
			bl, err := os.ReadFile(filepath.Join("testdata", "images", name+".blkid"))
			if err != nil {
				t.Fatal(err)
			}
			px, err := os.ReadFile(filepath.Join("testdata", "images", name+".partx"))
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstPartx(t, pt, blocktest.ParseExport(string(bl)), blocktest.ParsePartx(string(px)))
		})
	}
}

// checkAgainstPartx compares a table with blkid's PTTYPE/PTUUID and partx's
// rows (NR, START, SECTORS, UUID, NAME, TYPE).
func checkAgainstPartx(t *testing.T, pt *PartitionTable, blkid map[string]string, rows []map[string]string) {
	t.Helper()
	if pt.Type != blkid["PTTYPE"] || pt.DiskID != blkid["PTUUID"] {
		t.Errorf("table %s/%s, blkid says %s/%s", pt.Type, pt.DiskID, blkid["PTTYPE"], blkid["PTUUID"])
	}
	if len(pt.Partitions) != len(rows) {
		t.Fatalf("%d partitions, partx lists %d: %+v", len(pt.Partitions), len(rows), pt.Partitions)
	}
	for i, row := range rows {
		p := pt.Partitions[i]
		got := map[string]string{"NR": strconv.Itoa(p.Number), "START": fmt.Sprint(p.Start), "SECTORS": fmt.Sprint(p.Sectors),
			"UUID": p.UUID, "NAME": p.Name, "TYPE": p.Type}
		for k, v := range row {
			if got[k] != v {
				t.Errorf("partition %d: %s = %q, partx says %q", i+1, k, got[k], v)
			}
		}
	}
}

// TestPartitionTableMatchesPartx writes GPT and MBR tables with sfdisk and
// compares what ReadPartitionTable reads with partx and blkid.
func TestPartitionTableMatchesPartx(t *testing.T) {
	blocktest.RequireTools(t, "sfdisk", "partx", "blkid")
	scripts := map[string]string{
		"gpt": "label: gpt\nstart=2048, size=8192, name=\"gc data\"\nstart=10240, size=4096\n",
		"dos": "label: dos\nstart=2048, size=8192, type=83\nstart=10240, size=20000, type=5\nstart=12288, size=2048, type=83\nstart=16384, size=2048, type=82\n",
	}
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			img := blocktest.Sparse(t, t.TempDir(), name+".img", 32<<20)
			blocktest.RunInput(t, script, "sfdisk", "-q", img)
			f, err := os.Open(img)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			pt, err := ReadPartitionTable(f, 512)
			if err != nil {
				t.Fatal(err)
			}
			rows := blocktest.ParsePartx(blocktest.Run(t, "partx", "-g", "-o", "NR,START,SECTORS,UUID,NAME,TYPE", "-P", img))
			checkAgainstPartx(t, pt, blocktest.Blkid(t, img), rows)
		})
	}
}

func TestPartitionTableSynthetic(t *testing.T) {
	g := blocktest.GPT{DiskGUID: "01234567-89ab-cdef-0123-456789abcdef", Gap: 1, Parts: []blocktest.GPTPart{
		{Type: "0fc63daf-8483-4772-8e79-3d69d8477de4", UUID: "aabbccdd-eeff-0011-2233-445566778899", Name: "données 1", First: 2048, Last: 4095},
	}}
	pt, err := ReadPartitionTable(bytes.NewReader(g.Image()), 512)
	if err != nil {
		t.Fatal(err)
	}
	want := PartitionEntry{Number: 2, UUID: "aabbccdd-eeff-0011-2233-445566778899", Name: "données 1",
		Type: "0fc63daf-8483-4772-8e79-3d69d8477de4", Start: 2048, Sectors: 2048}
	if pt.Type != "gpt" || pt.DiskID != g.DiskGUID || len(pt.Partitions) != 1 || pt.Partitions[0] != want {
		t.Errorf("GPT = %+v", pt)
	}

	g4k := g
	g4k.SectorSize = 4096
	if pt, err := ReadPartitionTable(bytes.NewReader(g4k.Image()), 4096); err != nil || len(pt.Partitions) != 1 {
		t.Errorf("4K-sector GPT = %+v, %v", pt, err)
	}
	bad := g
	bad.CorruptHeader = true
	if _, err := ReadPartitionTable(bytes.NewReader(bad.Image()), 512); !errors.Is(err, ErrNoPartitionTable) {
		t.Errorf("corrupt GPT header: %v", err)
	}

	m := blocktest.MBR{Signature: 0xdeadbeef,
		Primary: [4]blocktest.MBRPart{{Type: 0x83, Start: 2048, Sectors: 1000}, {Type: 0x05, Start: 8192, Sectors: 20000}},
		Logical: []blocktest.MBRPart{{Type: 0x83, Start: 2048, Sectors: 100}, {Type: 0x82, Start: 2048, Sectors: 200}}}
	pt, err = ReadPartitionTable(bytes.NewReader(m.Image()), 512)
	if err != nil {
		t.Fatal(err)
	}
	wantMBR := []PartitionEntry{
		{Number: 1, UUID: "deadbeef-01", Type: "0x83", Start: 2048, Sectors: 1000},
		{Number: 2, UUID: "deadbeef-02", Type: "0x5", Start: 8192, Sectors: 20000},
		{Number: 5, UUID: "deadbeef-05", Type: "0x83", Start: 8192 + 2048, Sectors: 100},
		{Number: 6, UUID: "deadbeef-06", Type: "0x82", Start: 8192 + 4096 + 2048, Sectors: 200},
	}
	if pt.Type != "dos" || pt.DiskID != "deadbeef" || fmt.Sprint(pt.Partitions) != fmt.Sprint(wantMBR) {
		t.Errorf("MBR = %+v", pt)
	}

	zero := blocktest.MBR{Primary: [4]blocktest.MBRPart{{Type: 0x83, Start: 2048, Sectors: 10}}}
	if pt, err := ReadPartitionTable(bytes.NewReader(zero.Image()), 512); err != nil || pt.DiskID != "" || pt.Partitions[0].UUID != "" {
		t.Errorf("zero disk signature must give no PARTUUID: %+v, %v", pt, err)
	}
	// A FAT filesystem on the bare disk carries 0x55AA too; it is not an MBR.
	if _, err := ReadPartitionTable(bytes.NewReader(blocktest.FAT{Bits: 32, Serial: 1}.Image()), 512); !errors.Is(err, ErrNoPartitionTable) {
		t.Errorf("FAT boot sector read as a partition table: %v", err)
	}
	if _, err := ReadPartitionTable(bytes.NewReader(make([]byte, 4096)), 512); !errors.Is(err, ErrNoPartitionTable) {
		t.Errorf("empty disk: %v", err)
	}
}

func FuzzReadPartitionTable(f *testing.F) {
	f.Add(fixture(f, "gpt"))
	f.Add(blocktest.MBR{Signature: 1, Primary: [4]blocktest.MBRPart{{Type: 0x05, Start: 1, Sectors: 9}},
		Logical: []blocktest.MBRPart{{Type: 0x83, Start: 1, Sectors: 1}, {Type: 0x83, Start: 1, Sectors: 1}}}.Image())
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &countingReader{r: bytes.NewReader(b)}
		pt, err := ReadPartitionTable(c, 512)
		if c.n.Load() > 2<<20 {
			t.Fatalf("read %d bytes", c.n.Load())
		}
		if err == nil {
			for _, p := range pt.Partitions {
				if p.Number < 1 || (pt.Type == "dos" && p.Number > 4+maxLogical) {
					t.Fatalf("bad partition number %+v", p)
				}
			}
		}
	})
}
