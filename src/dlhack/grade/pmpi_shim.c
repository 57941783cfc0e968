/* The grader's MPI profiling shim: what a graded rank sends, seen below mpi4py.
 *
 * Built by dlhack/grade/pmpi.py (mpicc -shared); a graded rank loads it (RTLD_GLOBAL) before
 * mpi4py starts MPI, so every MPI_X that mpi4py calls lands here first, is written down, and
 * goes on to the library's PMPI_X. At MPI_Init it opens $DLHACK_TRAFFIC/traffic.RANK (O_EXCL:
 * one file per rank, never reopened by a child) and writes one line per call, fields apart by
 * single spaces (dlhack/grade/traffic.py reads them):
 *
 *   H pid rank size head_bytes                  the header, once
 *   P level                                     MPI_Pcontrol: the grader's test boundaries
 *   S kind comm dest_world dest tag count typesize head   a point-to-point send
 *   V kind comm source_world source tag count typesize    a posted receive
 *   C kind comm count typesize                  a collective (count -1: per-rank counts)
 *   R kind target count typesize                one-sided access to a window
 *   T kind n                                    starting n persistent requests
 *   O                                           too much logged: nothing more until the next P
 *
 * head is the first head_bytes bytes of the message, packed as MPI sends it, in hex ("-" when
 * empty or not known yet). world ranks: -1 for MPI_PROC_NULL, -2 for MPI_ANY_SOURCE.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define HEAD_BYTES 4096               /* payload bytes kept per message */
#define SEGMENT_CAP (8L << 20)        /* bytes logged between two MPI_Pcontrol calls */
#define FILE_CAP (48L << 20)          /* bytes logged in all (the grader's file limit is 64 MB) */

static FILE *log_file;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long segment_bytes, file_bytes;
static int overflowed;
static MPI_Group world_group = MPI_GROUP_NULL;

static void emit(const char *line, size_t n) {
    pthread_mutex_lock(&lock);
    if (log_file != NULL && !overflowed) {
        if (segment_bytes + (long)n > SEGMENT_CAP || file_bytes + (long)n > FILE_CAP) {
            overflowed = 1;
            fputs("O\n", log_file);
        } else {
            fwrite(line, 1, n, log_file);
            segment_bytes += (long)n;
            file_bytes += (long)n;
        }
    }
    pthread_mutex_unlock(&lock);
}

static void open_log(void) {
    const char *dir = getenv("DLHACK_TRAFFIC");
    int rank = -1, size = 0;
    char path[PATH_MAX];
    if (dir == NULL || log_file != NULL)
        return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    if (snprintf(path, sizeof path, "%s/traffic.%d", dir, rank) >= (int)sizeof path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || (log_file = fdopen(fd, "w")) == NULL)
        return;
    setvbuf(log_file, NULL, _IOFBF, 1 << 16);
    fprintf(log_file, "H %ld %d %d %d\n", (long)getpid(), rank, size, HEAD_BYTES);
    fflush(log_file);
}

static int to_world(MPI_Comm comm, int peer) {
    MPI_Group group;
    int inter = 0, world = -1;
    if (peer == MPI_PROC_NULL || world_group == MPI_GROUP_NULL)
        return -1;
    if (peer == MPI_ANY_SOURCE)
        return -2;
    if (comm == MPI_COMM_WORLD)
        return peer;
    PMPI_Comm_test_inter(comm, &inter);
    if ((inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group))
        != MPI_SUCCESS)
        return -1;
    PMPI_Group_translate_ranks(group, 1, &peer, world_group, &world);
    PMPI_Group_free(&group);
    return world == MPI_UNDEFINED ? -1 : world;
}

static MPI_Count type_size(MPI_Datatype type) {
    MPI_Count size = 0;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_size_c(type, &size) != MPI_SUCCESS)
        return 0;
    return size;
}

/* The first HEAD_BYTES bytes of the message as hex into out (2 * HEAD_BYTES + 2 chars). */
static void head(const void *buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm, char *out) {
    static const char digits[] = "0123456789abcdef";
    MPI_Count tsize = type_size(type), n, packed = 0, room = 0;
    strcpy(out, "-");
    if (buf == NULL || count <= 0 || tsize <= 0)
        return;
    n = count < (HEAD_BYTES + tsize - 1) / tsize ? count : (HEAD_BYTES + tsize - 1) / tsize;
    if (PMPI_Pack_size_c(n, type, comm, &room) != MPI_SUCCESS || room <= 0 || room > 64 * HEAD_BYTES)
        return;
    unsigned char *tmp = malloc((size_t)room);
    if (tmp == NULL)
        return;
    if (PMPI_Pack_c(buf, n, type, tmp, room, &packed, comm) == MPI_SUCCESS) {
        MPI_Count keep = packed < HEAD_BYTES ? packed : HEAD_BYTES;
        for (MPI_Count i = 0; i < keep; i++) {
            out[2 * i] = digits[tmp[i] >> 4];
            out[2 * i + 1] = digits[tmp[i] & 15];
        }
        out[keep > 0 ? 2 * keep : 1] = '\0';
    }
    free(tmp);
}

static void note_send(const char *kind, const void *buf, MPI_Count count, MPI_Datatype type,
                      int dest, int tag, MPI_Comm comm) {
    static __thread char line[2 * HEAD_BYTES + 256];
    char hex[2 * HEAD_BYTES + 2];
    if (log_file == NULL || overflowed)
        return;
    head(buf, count, type, comm, hex);
    int n = snprintf(line, sizeof line, "S %s %#x %d %d %d %lld %lld %s\n", kind + 4,
                     (unsigned)comm, to_world(comm, dest), dest, tag, (long long)count,
                     (long long)type_size(type), hex);
    emit(line, (size_t)n);
}

static void note_recv(const char *kind, MPI_Count count, MPI_Datatype type, int source, int tag,
                      MPI_Comm comm) {
    char line[256];
    if (log_file == NULL || overflowed)
        return;
    int n = snprintf(line, sizeof line, "V %s %#x %d %d %d %lld %lld\n", kind + 4, (unsigned)comm,
                     to_world(comm, source), source, tag, (long long)count,
                     (long long)type_size(type));
    emit(line, (size_t)n);
}

static void note_line(const char *format, ...) {
    char line[512];
    va_list args;
    if (log_file == NULL || overflowed)
        return;
    va_start(args, format);
    int n = vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (n > 0 && n < (int)sizeof line)
        emit(line, (size_t)n);
}

static long long size_of(MPI_Datatype type) {
    return type == MPI_DATATYPE_NULL ? 0 : (long long)type_size(type);
}

#define NOTE_COLL(kind, comm, count, type) \
    note_line("C %s %#x %lld %lld\n", (kind) + 4, (unsigned)(comm), (long long)(count), \
              size_of(type))
#define NOTE_RMA(kind, target, count, type) \
    note_line("R %s %d %lld %lld\n", (kind) + 4, (target), (long long)(count), size_of(type))

int MPI_Init(int *argc, char ***argv) {
    int err = PMPI_Init(argc, argv);
    open_log();
    return err;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int err = PMPI_Init_thread(argc, argv, required, provided);
    open_log();
    return err;
}

int MPI_Finalize(void) {
    pthread_mutex_lock(&lock);
    if (log_file != NULL) {
        fclose(log_file);
        log_file = NULL;
    }
    pthread_mutex_unlock(&lock);
    return PMPI_Finalize();
}

int MPI_Pcontrol(const int level, ...) {
    pthread_mutex_lock(&lock);
    if (log_file != NULL) {
        fprintf(log_file, "P %d\n", level);
        fflush(log_file);
        segment_bytes = 0;
        overflowed = 0;
    }
    pthread_mutex_unlock(&lock);
    return PMPI_Pcontrol(level);
}

/* Point-to-point. CT: the count's type (int, or MPI_Count for the _c functions). */
#define SEND(NAME, CT, X, XA) \
    int NAME(const void *b, CT c, MPI_Datatype t, int d, int g, MPI_Comm m X) { \
        note_send(#NAME, b, c, t, d, g, m); return P##NAME(b, c, t, d, g, m XA); }
#define SEND_INIT(NAME, CT) \
    int NAME(const void *b, CT c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *q) { \
        note_send(#NAME, NULL, c, t, d, g, m); return P##NAME(b, c, t, d, g, m, q); }
#define RECV(NAME, CT, X, XA) \
    int NAME(void *b, CT c, MPI_Datatype t, int s, int g, MPI_Comm m X) { \
        note_recv(#NAME, c, t, s, g, m); return P##NAME(b, c, t, s, g, m XA); }
#define SENDRECV(NAME, CT, X, XA) \
    int NAME(const void *sb, CT sc, MPI_Datatype st, int d, int sg, void *rb, CT rc, \
             MPI_Datatype rt, int s, int rg, MPI_Comm m X) { \
        note_send(#NAME, sb, sc, st, d, sg, m); note_recv(#NAME, rc, rt, s, rg, m); \
        return P##NAME(sb, sc, st, d, sg, rb, rc, rt, s, rg, m XA); }
#define REPLACE(NAME, CT, X, XA) \
    int NAME(void *b, CT c, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm m X) { \
        note_send(#NAME, b, c, t, d, sg, m); note_recv(#NAME, c, t, s, rg, m); \
        return P##NAME(b, c, t, d, sg, s, rg, m XA); }
#define NOX
#define STATUS , MPI_Status *z
#define STATUSA , z
#define REQ , MPI_Request *q
#define REQA , q
#define INIT , MPI_Info i, MPI_Request *q
#define INITA , i, q

SEND(MPI_Send, int, NOX, NOX) SEND(MPI_Ssend, int, NOX, NOX) SEND(MPI_Bsend, int, NOX, NOX)
SEND(MPI_Rsend, int, NOX, NOX) SEND(MPI_Isend, int, REQ, REQA) SEND(MPI_Issend, int, REQ, REQA)
SEND(MPI_Ibsend, int, REQ, REQA) SEND(MPI_Irsend, int, REQ, REQA)
SEND(MPI_Send_c, MPI_Count, NOX, NOX) SEND(MPI_Ssend_c, MPI_Count, NOX, NOX)
SEND(MPI_Bsend_c, MPI_Count, NOX, NOX) SEND(MPI_Rsend_c, MPI_Count, NOX, NOX)
SEND(MPI_Isend_c, MPI_Count, REQ, REQA) SEND(MPI_Issend_c, MPI_Count, REQ, REQA)
SEND(MPI_Ibsend_c, MPI_Count, REQ, REQA) SEND(MPI_Irsend_c, MPI_Count, REQ, REQA)
SEND_INIT(MPI_Send_init, int) SEND_INIT(MPI_Ssend_init, int) SEND_INIT(MPI_Bsend_init, int)
SEND_INIT(MPI_Rsend_init, int) SEND_INIT(MPI_Send_init_c, MPI_Count)
SEND_INIT(MPI_Ssend_init_c, MPI_Count) SEND_INIT(MPI_Bsend_init_c, MPI_Count)
SEND_INIT(MPI_Rsend_init_c, MPI_Count)
RECV(MPI_Recv, int, STATUS, STATUSA) RECV(MPI_Irecv, int, REQ, REQA)
RECV(MPI_Recv_c, MPI_Count, STATUS, STATUSA) RECV(MPI_Irecv_c, MPI_Count, REQ, REQA)
SENDRECV(MPI_Sendrecv, int, STATUS, STATUSA) SENDRECV(MPI_Isendrecv, int, REQ, REQA)
SENDRECV(MPI_Sendrecv_c, MPI_Count, STATUS, STATUSA) SENDRECV(MPI_Isendrecv_c, MPI_Count, REQ, REQA)
REPLACE(MPI_Sendrecv_replace, int, STATUS, STATUSA) REPLACE(MPI_Isendrecv_replace, int, REQ, REQA)
REPLACE(MPI_Sendrecv_replace_c, MPI_Count, STATUS, STATUSA)
REPLACE(MPI_Isendrecv_replace_c, MPI_Count, REQ, REQA)

int MPI_Psend_init(const void *b, int p, MPI_Count c, MPI_Datatype t, int d, int g, MPI_Comm m,
                   MPI_Info i, MPI_Request *q) {
    note_send("MPI_Psend_init", NULL, (MPI_Count)p * c, t, d, g, m);
    return PMPI_Psend_init(b, p, c, t, d, g, m, i, q);
}

int MPI_Start(MPI_Request *q) {
    note_line("T Start 1\n");
    return PMPI_Start(q);
}

int MPI_Startall(int n, MPI_Request qs[]) {
    note_line("T Startall %d\n", n);
    return PMPI_Startall(n, qs);
}

/* Collectives, by the shape of their arguments; each in its blocking, nonblocking (I) and
 * persistent (_init) forms, with int counts and with MPI_Count counts (_c). */
#define ALLRED(NAME, CT, X, XA) \
    int NAME(const void *s, void *r, CT c, MPI_Datatype t, MPI_Op o, MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, c, t); return P##NAME(s, r, c, t, o, m XA); }
#define RED(NAME, CT, X, XA) \
    int NAME(const void *s, void *r, CT c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, c, t); return P##NAME(s, r, c, t, o, root, m XA); }
#define BCAST(NAME, CT, X, XA) \
    int NAME(void *b, CT c, MPI_Datatype t, int root, MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, c, t); return P##NAME(b, c, t, root, m XA); }
#define GATH(NAME, CT, X, XA) \
    int NAME(const void *s, CT sc, MPI_Datatype st, void *r, CT rc, MPI_Datatype rt, int root, \
             MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, sc, st); return P##NAME(s, sc, st, r, rc, rt, root, m XA); }
#define ALLGATH(NAME, CT, X, XA) \
    int NAME(const void *s, CT sc, MPI_Datatype st, void *r, CT rc, MPI_Datatype rt, \
             MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, sc, st); return P##NAME(s, sc, st, r, rc, rt, m XA); }
#define GATHV(NAME, CT, DT, X, XA) \
    int NAME(const void *s, CT sc, MPI_Datatype st, void *r, const CT rcs[], const DT ds[], \
             MPI_Datatype rt, int root, MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, sc, st); return P##NAME(s, sc, st, r, rcs, ds, rt, root, m XA); }
#define SCATV(NAME, CT, DT, X, XA) \
    int NAME(const void *s, const CT scs[], const DT ds[], MPI_Datatype st, void *r, CT rc, \
             MPI_Datatype rt, int root, MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, -1, st); return P##NAME(s, scs, ds, st, r, rc, rt, root, m XA); }
#define ALLGATHV(NAME, CT, DT, X, XA) \
    int NAME(const void *s, CT sc, MPI_Datatype st, void *r, const CT rcs[], const DT ds[], \
             MPI_Datatype rt, MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, sc, st); return P##NAME(s, sc, st, r, rcs, ds, rt, m XA); }
#define A2AV(NAME, CT, DT, X, XA) \
    int NAME(const void *s, const CT scs[], const DT sd[], MPI_Datatype st, void *r, \
             const CT rcs[], const DT rd[], MPI_Datatype rt, MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, -1, st); return P##NAME(s, scs, sd, st, r, rcs, rd, rt, m XA); }
#define A2AW(NAME, CT, DT, X, XA) \
    int NAME(const void *s, const CT scs[], const DT sd[], const MPI_Datatype sts[], void *r, \
             const CT rcs[], const DT rd[], const MPI_Datatype rts[], MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, -1, MPI_DATATYPE_NULL); \
        return P##NAME(s, scs, sd, sts, r, rcs, rd, rts, m XA); }
#define RSCAT(NAME, CT, X, XA) \
    int NAME(const void *s, void *r, const CT rcs[], MPI_Datatype t, MPI_Op o, MPI_Comm m X) { \
        NOTE_COLL(#NAME, m, -1, t); return P##NAME(s, r, rcs, t, o, m XA); }
#define BARRIER(NAME, X, XA) \
    int NAME(MPI_Comm m X) { NOTE_COLL(#NAME, m, 0, MPI_DATATYPE_NULL); return P##NAME(m XA); }
/* Each shape in six forms: NAME, INAME, NAME_init, and the same with _c. */
#define SIX(SHAPE, NAME, INAME) \
    SHAPE(NAME, int, NOX, NOX) SHAPE(INAME, int, REQ, REQA) SHAPE(NAME##_init, int, INIT, INITA) \
    SHAPE(NAME##_c, MPI_Count, NOX, NOX) SHAPE(INAME##_c, MPI_Count, REQ, REQA) \
    SHAPE(NAME##_init_c, MPI_Count, INIT, INITA)
#define SIXV(SHAPE, NAME, INAME, DT) \
    SHAPE(NAME, int, DT, NOX, NOX) SHAPE(INAME, int, DT, REQ, REQA) \
    SHAPE(NAME##_init, int, DT, INIT, INITA) SHAPE(NAME##_c, MPI_Count, MPI_Aint, NOX, NOX) \
    SHAPE(INAME##_c, MPI_Count, MPI_Aint, REQ, REQA) \
    SHAPE(NAME##_init_c, MPI_Count, MPI_Aint, INIT, INITA)

SIX(ALLRED, MPI_Allreduce, MPI_Iallreduce) SIX(ALLRED, MPI_Scan, MPI_Iscan)
SIX(ALLRED, MPI_Exscan, MPI_Iexscan) SIX(RED, MPI_Reduce, MPI_Ireduce)
SIX(ALLRED, MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block)
SIX(RSCAT, MPI_Reduce_scatter, MPI_Ireduce_scatter) SIX(BCAST, MPI_Bcast, MPI_Ibcast)
SIX(GATH, MPI_Gather, MPI_Igather) SIX(GATH, MPI_Scatter, MPI_Iscatter)
SIX(ALLGATH, MPI_Allgather, MPI_Iallgather) SIX(ALLGATH, MPI_Alltoall, MPI_Ialltoall)
SIX(ALLGATH, MPI_Neighbor_allgather, MPI_Ineighbor_allgather)
SIX(ALLGATH, MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall)
SIXV(GATHV, MPI_Gatherv, MPI_Igatherv, int) SIXV(SCATV, MPI_Scatterv, MPI_Iscatterv, int)
SIXV(ALLGATHV, MPI_Allgatherv, MPI_Iallgatherv, int) SIXV(A2AV, MPI_Alltoallv, MPI_Ialltoallv, int)
SIXV(A2AW, MPI_Alltoallw, MPI_Ialltoallw, int)
SIXV(ALLGATHV, MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv, int)
SIXV(A2AV, MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv, int)
SIXV(A2AW, MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw, MPI_Aint)
BARRIER(MPI_Barrier, NOX, NOX) BARRIER(MPI_Ibarrier, REQ, REQA)
BARRIER(MPI_Barrier_init, INIT, INITA)

/* One-sided: a window's target rank. */
#define RMA(NAME, CT, X, XA) \
    int NAME(const void *o, CT oc, MPI_Datatype ot, int tr, MPI_Aint td, CT tc, MPI_Datatype tt, \
             MPI_Win w X) { NOTE_RMA(#NAME, tr, oc, ot); return P##NAME(o, oc, ot, tr, td, tc, tt, w XA); }
#define RMA_GET(NAME, CT, X, XA) \
    int NAME(void *o, CT oc, MPI_Datatype ot, int tr, MPI_Aint td, CT tc, MPI_Datatype tt, \
             MPI_Win w X) { NOTE_RMA(#NAME, tr, oc, ot); return P##NAME(o, oc, ot, tr, td, tc, tt, w XA); }
#define ACC(NAME, CT, X, XA) \
    int NAME(const void *o, CT oc, MPI_Datatype ot, int tr, MPI_Aint td, CT tc, MPI_Datatype tt, \
             MPI_Op op, MPI_Win w X) { \
        NOTE_RMA(#NAME, tr, oc, ot); return P##NAME(o, oc, ot, tr, td, tc, tt, op, w XA); }
#define GACC(NAME, CT, X, XA) \
    int NAME(const void *o, CT oc, MPI_Datatype ot, void *r, CT rc, MPI_Datatype rt, int tr, \
             MPI_Aint td, CT tc, MPI_Datatype tt, MPI_Op op, MPI_Win w X) { \
        NOTE_RMA(#NAME, tr, oc, ot); \
        return P##NAME(o, oc, ot, r, rc, rt, tr, td, tc, tt, op, w XA); }
#define FOUR(SHAPE, NAME, RNAME) \
    SHAPE(NAME, int, NOX, NOX) SHAPE(RNAME, int, REQ, REQA) \
    SHAPE(NAME##_c, MPI_Count, NOX, NOX) SHAPE(RNAME##_c, MPI_Count, REQ, REQA)

FOUR(RMA, MPI_Put, MPI_Rput) FOUR(RMA_GET, MPI_Get, MPI_Rget)
FOUR(ACC, MPI_Accumulate, MPI_Raccumulate) FOUR(GACC, MPI_Get_accumulate, MPI_Rget_accumulate)

int MPI_Fetch_and_op(const void *o, void *r, MPI_Datatype t, int tr, MPI_Aint td, MPI_Op op,
                     MPI_Win w) {
    NOTE_RMA("MPI_Fetch_and_op", tr, 1, t);
    return PMPI_Fetch_and_op(o, r, t, tr, td, op, w);
}

int MPI_Compare_and_swap(const void *o, const void *c, void *r, MPI_Datatype t, int tr,
                         MPI_Aint td, MPI_Win w) {
    NOTE_RMA("MPI_Compare_and_swap", tr, 1, t);
    return PMPI_Compare_and_swap(o, c, r, t, tr, td, w);
}

/* Making a window is collective: a window shared in memory moves data without a call. */
int MPI_Win_allocate_shared(MPI_Aint size, int unit, MPI_Info i, MPI_Comm m, void *base,
                            MPI_Win *w) {
    NOTE_COLL("MPI_Win_allocate_shared", m, size, MPI_BYTE);
    return PMPI_Win_allocate_shared(size, unit, i, m, base, w);
}

int MPI_Win_allocate(MPI_Aint size, int unit, MPI_Info i, MPI_Comm m, void *base, MPI_Win *w) {
    NOTE_COLL("MPI_Win_allocate", m, size, MPI_BYTE);
    return PMPI_Win_allocate(size, unit, i, m, base, w);
}

int MPI_Win_create(void *base, MPI_Aint size, int unit, MPI_Info i, MPI_Comm m, MPI_Win *w) {
    NOTE_COLL("MPI_Win_create", m, size, MPI_BYTE);
    return PMPI_Win_create(base, size, unit, i, m, w);
}

int MPI_Win_create_dynamic(MPI_Info i, MPI_Comm m, MPI_Win *w) {
    NOTE_COLL("MPI_Win_create_dynamic", m, 0, MPI_DATATYPE_NULL);
    return PMPI_Win_create_dynamic(i, m, w);
}
