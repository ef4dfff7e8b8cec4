"""Every tunable of fastkappa's core in one place.

Thresholds that choose between code paths (serial or parallel kernels, a
direct table or a lookup table, dense or sparse resampling), block sizes and
the limits that guard memory.  None of them changes a result, only the time
and memory it takes.  The core reads its own as ``config.NAME`` at call time
(a test lowers one with ``monkeypatch.setattr(config, NAME, value)``); the
estimators import theirs by name (patch those where they are used).
"""

#: rows per chunk below which kernels run serially (measured on 2 cores)
PARALLEL_MIN_ROWS = 1 << 18
#: bytes the per-chunk partial tables may take beyond half the input's size
PARTIALS_SLACK = 2 << 20
#: largest value range counted directly into a (range x range) table
DIRECT_RANGE_MAX = 64
#: largest value range handled with a lookup table
LUT_RANGE_MAX = 1 << 22
#: the most classes a confusion matrix may have
MAX_CLASSES = 4096
#: largest total count a row-by-row entry point expands (8 bytes per row and index)
MAX_EXPANDED_ROWS = 2**31

# ------------------------------------------------- resampling (_core/units.py)

#: blocks of replicates (each seeded once); fixed, never the thread count
MAX_BLOCKS = 64
#: the most bootstrap replicates an interval may ask for (8 bytes each, 16 GiB);
#: fewer when the machine's memory cannot hold them
MAX_RESAMPLES = 2**31

#: draw units by index instead of a multinomial over types when types > units / 4
TYPES_PER_UNIT_MAX = 0.25

#: below this many binomial draws in all, run the bootstrap on one thread (the
#: blocks and so the result are the same; a parallel launch costs more)
SERIAL_MAX_DRAWS = 200_000

#: up to this many, also on one thread while the parallel kernel is neither
#: compiled in this process nor in the kernel cache: its twin gives the same
#: result, and compiling a parallel driver costs about 1.1 s more (measured:
#: 2.4 s against 1.3 s); the serial run is at most about 0.1 s longer
COLD_SERIAL_MAX_DRAWS = 20_000_000

#: seconds a process runs a driver's serial twin that way (compiling left out)
#: before it compiles the parallel driver after all: about the extra compile
#: time it saved, so repeated calls never lose more than they gained
COLD_SERIAL_BUDGET = 1.0
#: environment variable: ``0`` turns off what a fresh kernel cache does instead
#: of compiling (the serial drivers above, NumPy counts; see
#: ``_kernels._jit.cold_stand_ins``), for benchmarks and tests of the kernels
COLD_SERIAL_ENV = "FASTKAPPA_COLD_SERIAL"

#: above this many K*K cells, joint cells are numbered by occupancy, not densely
DENSE_CELLS_MAX = 1 << 16

#: from this many classes, iid rows are resampled over the occupied cells only with
#: O(cells + K) kappas (``_kernels.resampling._bootstrap_kappa_cells``); below it the
#: dense path is as fast and keeps the replicates of earlier releases for a seed
SPARSE_MIN_CLASSES = 16

#: the sparse path draws cells as Poisson variates topped up to N (one uniform and
#: one alias-table read per cell, plus about sqrt(N) top-up draws) when the cells
#: outnumber sqrt(N) / 4 (a binomial costs ~5 uniforms) and their alias tables stay
#: below this many entries; else one fast binomial per cell
POISSON_TABLE_MAX = 1 << 20

#: a paired comparison of iid rows draws rows straight into per-model tables when
#: its joint types exceed this share of the rows (a multinomial over joint types
#: then costs about a binomial per row and a joint table as long as the data)
ROWS_MIN_TYPES_PER_ROW = 1 / 16

#: rows per chunk of that path: the draws falling in a chunk touch only its rows
ROW_CHUNK = 4096

# ---------------------------------------------- per-group tables (groups.py)

#: integer group ids spanning fewer values than this get one slot per value
DIRECT_GROUPS_MAX = 1 << 16

#: the most per-chunk partial counts the group kernel allocates (all chunks together)
GROUP_PARTIALS_MAX = 1 << 19

#: the most bytes the per-group tables may take (checked before allocating)
GROUP_TABLES_MAX_BYTES = 1 << 31

#: rows sampled (evenly spaced, the last included) to guess integer group ids' range
GUESS_SAMPLE = 4096

# --------------------------------- many raters (raters.py, _raters_input.py)

#: long format: items x raters cells per rating row beyond which the panel is
#: counted without a dense table of rater codes (no Conger's kappa then)
DENSE_PER_ROW = 8

#: long-format integer ids are numbered through a direct map (one int64 per id
#: in the range) while the range is at most 4 x the ids seen + 1024, or at most
#: this many ids (128 MiB of zeroed memory, touched only where ids occur)
ID_MAP_MIN = 1 << 24

#: wide numeric ratings are grouped by rating row in one pass (one key per item,
#: no items x raters code table) when the (K + 1) ** raters possible rows fit a
#: dense count table of at most this many keys (8 MiB of int64 counts)
PATTERN_MAX_KEYS = 1 << 20

#: ratings below which the encoding kernels run on one thread: a pass costs
#: about 1-2 ns per rating, less than waking the other threads (measured on 2
#: busy cores: a parallel launch over 5e5 ratings took 40 ms, the serial pass
#: 2 ms; on 2 quiet cores, 1e6 items x 5 raters: fk.agreement 11.6 ms serial,
#: 9.3 ms parallel)
PARALLEL_MIN_RATINGS = 1 << 21

#: draw units by index instead of a multinomial of conditional binomials above
#: this many types per unit (measured: a binomial costs about 3x a uniform unit
#: draw plus its count; at 0.25 types per unit the multinomial was still
#: faster).  A multinomial with Poisson tables is kept at any ratio (faster
#: than index draws even at 0.94 types per unit)
RATERS_TYPES_PER_UNIT_MAX = 0.4

#: draw the multinomial over types from Poisson tables (one look-up per type plus
#: ~sqrt(n) top-up draws) from this many types per sqrt(units) on; below it
#: one binomial per type is cheaper (measured: 7,775 Conger row types at 1e6
#: items halved; 251 count types at 1e6 items doubled)
POISSON_MIN_TYPES_PER_ROOT = 2.0

# ----------------------------------------------------- file readers (_io.py)

#: bytes per CSV block handed to the parser: small blocks keep the reader's
#: read-ahead (several blocks in flight) and each batch's arrays small
CSV_BLOCK_SIZE = 1 << 20

#: rows per Parquet batch
PARQUET_BATCH_ROWS = 1 << 20

#: a plain score counts a Parquet file of at least this many rows from its
#: dictionary pages (``fastkappa._parquet_pages``); smaller files are read by
#: pyarrow, so that their first call compiles none of the page kernels
#: (about 1 s with an empty cache) for a read that takes milliseconds
PAGES_MIN_ROWS = 1 << 20

#: ... and whose row groups hold at least this many rows on average: the page
#: reader's Python work per row group (reading its page headers' table) pays
#: off on pyarrow's default 2^20-row groups (0.6x the time on 1e7 rows), breaks
#: even at 2^18 rows and loses at DuckDB's 122,880 (1.1x)
PAGES_MIN_GROUP_ROWS = 1 << 19

#: batches decoded ahead of the one being scored
PREFETCH = 2

#: seconds to wait, once reading standard input stops early (an error), for
#: pyarrow's read-ahead threads to let go of it: one read in flight on a live
#: pipe ends well within this; a stalled pipe is given up on
STREAM_RELEASE_WAIT = 5.0

#: seconds before the progress bar shows (short inputs never show one)
PROGRESS_DELAY = 1.0

#: the longest CSV header line read (bytes); a longer one, or a file without a
#: newline (``/dev/zero``), is an error rather than an unbounded read
MAX_HEADER_BYTES = 1 << 20

#: seconds between the main thread's checks for Ctrl-C while it waits on workers
WAIT_POLL = 0.1
