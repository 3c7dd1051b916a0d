/* fe-pickle.c - PyTorch .pt checkpoints: a zip archive whose data.pkl is a
 * pickle of the state dict and whose data/<key> entries hold the storages.
 *
 * A pickle is a program: GLOBAL + REDUCE calls any Python function, which is
 * how a malicious .pt runs os.system. This unpickler implements only the
 * opcodes torch.save() emits and calls only what torch.load(weights_only=True)
 * allows - OrderedDict, _rebuild_tensor_v2, _rebuild_parameter and the typed
 * storages - and refuses every other global by name before anything runs. */
#include "fe-weights-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on what a hostile data.pkl can make us allocate. */
#define FE_PK_MAX_OBJECTS (1u << 20)   /* ~220 MB worst case; a state dict needs ~15 per tensor */
#define FE_PK_MAX_MEMO (1u << 22)
#define FE_PK_MAX_STACK (1u << 20)

typedef enum {
    FE_PK_NONE = 0,
    FE_PK_BOOL,
    FE_PK_INT,
    FE_PK_FLOAT,
    FE_PK_STR,
    FE_PK_TUPLE,
    FE_PK_LIST,
    FE_PK_DICT,
    FE_PK_GLOBAL,
    FE_PK_STORAGE,
    FE_PK_TENSOR,
} fe_pk_type;

typedef enum {
    FE_PK_GLOBAL_ORDERED_DICT = 0,
    FE_PK_GLOBAL_REBUILD_TENSOR,
    FE_PK_GLOBAL_REBUILD_TENSOR_V2,
    FE_PK_GLOBAL_REBUILD_PARAMETER,
    FE_PK_GLOBAL_STORAGE_TYPE,
} fe_pk_global_kind;

typedef struct FePkObj FePkObj;
struct FePkObj {
    fe_pk_type type;
    int64_t integer;           /* INT, BOOL                                     */
    double number;             /* FLOAT                                         */
    char *string;              /* STR (NUL-terminated), GLOBAL's dotted name    */
    FePkObj **items;           /* TUPLE, LIST; DICT as key, value, key, ...     */
    size_t n_items, cap;
    fe_pk_global_kind global;  /* GLOBAL                                        */
    fe_dtype dtype;            /* GLOBAL storage type, STORAGE, TENSOR          */
    const uint8_t *data;       /* STORAGE bytes in the archive                  */
    uint64_t numel;            /* STORAGE elements                              */
    FePkObj *storage;          /* TENSOR                                        */
    int64_t offset;            /* TENSOR storage offset in elements             */
    int ndim;
    int64_t shape[8], stride[8];
};

typedef struct {
    const uint8_t *pkl;
    size_t len, pos;
    const FeZipArchive *zip;
    const char *prefix;        /* "archive/"                                     */
    FePkObj **objects;         /* every object made, for freeing               */
    size_t n_objects, cap_objects;
    FePkObj **stack;
    size_t n_stack, cap_stack;
    size_t *marks;
    size_t n_marks, cap_marks;
    FePkObj **memo;
    size_t n_memo;             /* slots allocated                               */
    size_t memo_len;           /* slots set: MEMOIZE's index, as len(memo)      */
} FePickle;

static const struct {
    const char *name;
    fe_dtype dtype;
} fe_pk_storages[] = {
    {"FloatStorage", FE_DTYPE_F32},  {"HalfStorage", FE_DTYPE_F16},
    {"BFloat16Storage", FE_DTYPE_BF16}, {"DoubleStorage", FE_DTYPE_F64},
    {"LongStorage", FE_DTYPE_I64},   {"IntStorage", FE_DTYPE_I32},
    {"ShortStorage", FE_DTYPE_I16},  {"CharStorage", FE_DTYPE_I8},
    {"ByteStorage", FE_DTYPE_U8},    {"BoolStorage", FE_DTYPE_BOOL},
};

static const char *fe_pk_type_name(fe_pk_type t) {
    switch (t) {
    case FE_PK_NONE: return "None";
    case FE_PK_BOOL: return "bool";
    case FE_PK_INT: return "int";
    case FE_PK_FLOAT: return "float";
    case FE_PK_STR: return "str";
    case FE_PK_TUPLE: return "tuple";
    case FE_PK_LIST: return "list";
    case FE_PK_DICT: return "dict";
    case FE_PK_GLOBAL: return "global";
    case FE_PK_STORAGE: return "storage";
    case FE_PK_TENSOR: return "tensor";
    default: return "?";
    }
}

static fe_status fe_pk_oom(void) {
    return fe_set_error(FE_ERR_OUT_OF_MEMORY, "data.pkl: out of memory unpickling");
}

static fe_status fe_pk_error(const FePickle *p, const char *what) {
    return fe_set_error(FE_ERR_FORMAT, "data.pkl: %s at byte %zu", what, p->pos);
}

static fe_status fe_pk_new(FePickle *p, fe_pk_type type, FePkObj **out) {
    FePkObj *o;
    if (p->n_objects >= FE_PK_MAX_OBJECTS)
        return fe_pk_error(p, "too many objects");
    if (p->n_objects == p->cap_objects) {
        size_t cap = p->cap_objects ? p->cap_objects * 2 : 256;
        FePkObj **grown = realloc(p->objects, cap * sizeof *grown);
        if (!grown)
            return fe_pk_oom();
        p->objects = grown;
        p->cap_objects = cap;
    }
    o = calloc(1, sizeof *o);
    if (!o)
        return fe_pk_oom();
    o->type = type;
    p->objects[p->n_objects++] = o;
    *out = o;
    return FE_OK;
}

static fe_status fe_pk_push(FePickle *p, FePkObj *o) {
    if (p->n_stack >= FE_PK_MAX_STACK)
        return fe_pk_error(p, "stack too deep");
    if (p->n_stack == p->cap_stack) {
        size_t cap = p->cap_stack ? p->cap_stack * 2 : 64;
        FePkObj **grown = realloc(p->stack, cap * sizeof *grown);
        if (!grown)
            return fe_pk_oom();
        p->stack = grown;
        p->cap_stack = cap;
    }
    p->stack[p->n_stack++] = o;
    return FE_OK;
}

/* The bottom of the current frame: objects above the last MARK belong to it. */
static size_t fe_pk_floor(const FePickle *p) {
    return p->n_marks ? p->marks[p->n_marks - 1] : 0;
}

static fe_status fe_pk_pop(FePickle *p, FePkObj **out) {
    if (p->n_stack <= fe_pk_floor(p))
        return fe_pk_error(p, "stack underflow");
    *out = p->stack[--p->n_stack];
    return FE_OK;
}

static fe_status fe_pk_top(FePickle *p, FePkObj **out) {
    if (p->n_stack <= fe_pk_floor(p))
        return fe_pk_error(p, "stack underflow");
    *out = p->stack[p->n_stack - 1];
    return FE_OK;
}

static fe_status fe_pk_pop_mark(FePickle *p, size_t *mark) {
    if (p->n_marks == 0)
        return fe_pk_error(p, "no MARK on the stack");
    *mark = p->marks[--p->n_marks];
    return FE_OK;
}

static fe_status fe_pk_add_item(FePkObj *o, FePkObj *item) {
    if (o->n_items == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 4;
        FePkObj **grown = realloc(o->items, cap * sizeof *grown);
        if (!grown)
            return fe_pk_oom();
        o->items = grown;
        o->cap = cap;
    }
    o->items[o->n_items++] = item;
    return FE_OK;
}

static fe_status fe_pk_need(FePickle *p, size_t n) {
    if (p->len - p->pos < n)
        return fe_pk_error(p, "truncated");
    return FE_OK;
}

static uint64_t fe_pk_le(const uint8_t *b, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

static fe_status fe_pk_push_int(FePickle *p, int64_t value) {
    FePkObj *o;
    FE_TRY(fe_pk_new(p, FE_PK_INT, &o));
    o->integer = value;
    return fe_pk_push(p, o);
}

static fe_status fe_pk_push_str(FePickle *p, uint64_t n) {
    FePkObj *o;
    if (n > p->len - p->pos)
        return fe_pk_error(p, "truncated string");
    if (memchr(p->pkl + p->pos, '\0', (size_t)n))
        return fe_pk_error(p, "string with a NUL byte");
    FE_TRY(fe_pk_new(p, FE_PK_STR, &o));
    o->string = malloc((size_t)n + 1);
    if (!o->string)
        return fe_pk_oom();
    memcpy(o->string, p->pkl + p->pos, (size_t)n);
    o->string[n] = '\0';
    p->pos += (size_t)n;
    return fe_pk_push(p, o);
}

static fe_status fe_pk_make_tuple(FePickle *p, size_t from) {
    FePkObj *t;
    FE_TRY(fe_pk_new(p, FE_PK_TUPLE, &t));
    for (size_t i = from; i < p->n_stack; i++)
        FE_TRY(fe_pk_add_item(t, p->stack[i]));
    p->n_stack = from;
    return fe_pk_push(p, t);
}

static fe_status fe_pk_memo_put(FePickle *p, uint64_t index) {
    FePkObj *top;
    FE_TRY(fe_pk_top(p, &top));
    if (index >= FE_PK_MAX_MEMO)
        return fe_pk_error(p, "memo index too large");
    if (index >= p->n_memo) {
        size_t n = (size_t)index + 1;
        size_t cap = p->n_memo ? p->n_memo : 64;
        FePkObj **grown;
        while (cap < n)
            cap *= 2;
        grown = realloc(p->memo, cap * sizeof *grown);
        if (!grown)
            return fe_pk_oom();
        memset(grown + p->n_memo, 0, (cap - p->n_memo) * sizeof *grown);
        p->memo = grown;
        p->n_memo = cap;
    }
    if (!p->memo[index])
        p->memo_len++;
    p->memo[index] = top;
    return FE_OK;
}

static fe_status fe_pk_memo_get(FePickle *p, uint64_t index) {
    if (index >= p->n_memo || !p->memo[index])
        return fe_pk_error(p, "memo lookup of an unset slot");
    return fe_pk_push(p, p->memo[index]);
}

/* GLOBAL: the only place a pickle can name code. Anything not on the list is
 * refused here, before it could be called. */
static fe_status fe_pk_push_global(FePickle *p, const char *module, const char *name) {
    FePkObj *o;
    fe_pk_global_kind kind;
    fe_dtype dtype = FE_DTYPE_F32;

    if (strcmp(module, "collections") == 0 && strcmp(name, "OrderedDict") == 0) {
        kind = FE_PK_GLOBAL_ORDERED_DICT;
    } else if (strcmp(module, "torch._utils") == 0 && strcmp(name, "_rebuild_tensor") == 0) {
        kind = FE_PK_GLOBAL_REBUILD_TENSOR;
    } else if (strcmp(module, "torch._utils") == 0 && strcmp(name, "_rebuild_tensor_v2") == 0) {
        kind = FE_PK_GLOBAL_REBUILD_TENSOR_V2;
    } else if (strcmp(module, "torch._utils") == 0 &&
               (strcmp(name, "_rebuild_parameter") == 0 ||
                strcmp(name, "_rebuild_parameter_with_state") == 0)) {
        kind = FE_PK_GLOBAL_REBUILD_PARAMETER;
    } else {
        size_t i, n = sizeof fe_pk_storages / sizeof fe_pk_storages[0];
        for (i = 0; i < n; i++)
            if (strcmp(module, "torch") == 0 && strcmp(name, fe_pk_storages[i].name) == 0)
                break;
        if (i == n)
            return fe_set_error(FE_ERR_UNSUPPORTED,
                                "refusing pickle global %.60s.%.60s: only tensors and plain "
                                "containers are allowed",
                                module, name);
        kind = FE_PK_GLOBAL_STORAGE_TYPE;
        dtype = fe_pk_storages[i].dtype;
    }
    FE_TRY(fe_pk_new(p, FE_PK_GLOBAL, &o));
    o->global = kind;
    o->dtype = dtype;
    o->string = malloc(strlen(module) + strlen(name) + 2);
    if (!o->string)
        return fe_pk_oom();
    sprintf(o->string, "%s.%s", module, name);
    return fe_pk_push(p, o);
}

static fe_status fe_pk_line(FePickle *p, char *buf, size_t size) {
    const uint8_t *nl = memchr(p->pkl + p->pos, '\n', p->len - p->pos);
    size_t n;
    if (!nl)
        return fe_pk_error(p, "truncated GLOBAL");
    n = (size_t)(nl - (p->pkl + p->pos));
    if (n >= size || memchr(p->pkl + p->pos, '\0', n))
        return fe_pk_error(p, "GLOBAL name too long or malformed");
    memcpy(buf, p->pkl + p->pos, n);
    buf[n] = '\0';
    p->pos += n + 1;
    return FE_OK;
}

/* BINPERSID ('storage', <storage type>, key, location, numel): the storage's
 * bytes are the zip entry <prefix>data/<key>, whatever device it was saved
 * from - we always read into CPU memory. */
static fe_status fe_pk_persistent(FePickle *p, FePkObj *pid, FePkObj **out) {
    FePkObj *type, *key, *numel, *o;
    const FeZipEntry *entry;
    char path[512];
    uint64_t nbytes;

    if (pid->type != FE_PK_TUPLE || pid->n_items != 5 || pid->items[0]->type != FE_PK_STR ||
        strcmp(pid->items[0]->string, "storage") != 0)
        return fe_pk_error(p, "persistent id is not a ('storage', ...) tuple");
    type = pid->items[1];
    key = pid->items[2];
    numel = pid->items[4];
    if (type->type != FE_PK_GLOBAL || type->global != FE_PK_GLOBAL_STORAGE_TYPE ||
        key->type != FE_PK_STR || pid->items[3]->type != FE_PK_STR || numel->type != FE_PK_INT ||
        numel->integer < 0)
        return fe_pk_error(p, "malformed storage persistent id");
    snprintf(path, sizeof path, "%sdata/%s", p->prefix, key->string);
    entry = fe_zip_find(p->zip, path);
    if (!entry)
        return fe_set_error(FE_ERR_FORMAT, "storage entry '%.200s' is missing from the archive",
                            path);
    if (entry->method != 0)
        return fe_set_error(FE_ERR_UNSUPPORTED,
                            "zip entry '%.200s' is compressed (method %d); only stored entries "
                            "are supported - save with torch.save()",
                            path, entry->method);
    if (__builtin_mul_overflow((uint64_t)numel->integer, (uint64_t)fe_dtype_size(type->dtype),
                               &nbytes) ||
        nbytes > entry->size)
        return fe_set_error(FE_ERR_FORMAT,
                            "storage '%.200s' holds %llu bytes, fewer than its %lld %s elements need",
                            path, (unsigned long long)entry->size, (long long)numel->integer,
                            fe_dtype_name(type->dtype));
    FE_TRY(fe_pk_new(p, FE_PK_STORAGE, &o));
    o->dtype = type->dtype;
    o->data = entry->data;
    o->numel = (uint64_t)numel->integer;
    *out = o;
    return FE_OK;
}

static fe_status fe_pk_int_tuple(const FePickle *p, const FePkObj *t, int64_t *vals, int *n) {
    if (t->type != FE_PK_TUPLE || t->n_items > 8)
        return fe_pk_error(p, "tensor size/stride is not a tuple of at most 8 ints");
    for (size_t i = 0; i < t->n_items; i++) {
        if (t->items[i]->type != FE_PK_INT || t->items[i]->integer < 0)
            return fe_pk_error(p, "tensor size/stride entry is not a non-negative int");
        vals[i] = t->items[i]->integer;
    }
    *n = (int)t->n_items;
    return FE_OK;
}

/* _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
 * backward_hooks[, metadata]) or the older _rebuild_tensor(storage,
 * storage_offset, size, stride); gradients and hooks mean nothing here. */
static fe_status fe_pk_rebuild_tensor(FePickle *p, const FePkObj *args, bool v2, FePkObj **out) {
    FePkObj *t;
    int n_size = 0, n_stride = 0;
    uint64_t last = 0, numel = 1;

    if (v2 ? args->n_items != 6 && args->n_items != 7 : args->n_items != 4)
        return fe_pk_error(p, v2 ? "_rebuild_tensor_v2 takes 6 or 7 arguments"
                                 : "_rebuild_tensor takes 4 arguments");
    if (args->items[0]->type != FE_PK_STORAGE || args->items[1]->type != FE_PK_INT ||
        args->items[1]->integer < 0)
        return fe_pk_error(p, "_rebuild_tensor_v2 needs a storage and an offset");
    FE_TRY(fe_pk_new(p, FE_PK_TENSOR, &t));
    t->storage = args->items[0];
    t->dtype = t->storage->dtype;
    t->offset = args->items[1]->integer;
    FE_TRY(fe_pk_int_tuple(p, args->items[2], t->shape, &n_size));
    FE_TRY(fe_pk_int_tuple(p, args->items[3], t->stride, &n_stride));
    if (n_size != n_stride)
        return fe_pk_error(p, "tensor size and stride differ in length");
    t->ndim = n_size;
    /* The last element addressed must lie inside the storage. */
    for (int i = 0; i < t->ndim; i++) {
        uint64_t span;
        if (__builtin_mul_overflow(numel, (uint64_t)t->shape[i], &numel))
            return fe_pk_error(p, "tensor too large");
        if (t->shape[i] == 0)
            continue;
        /* A stride-0 dimension repeats one element: (2^14, 2^14) over one
         * float would expand a 500-byte file to 1 GB. torch.save never
         * writes one for a parameter; an expanded tensor is not a weight. */
        if (t->shape[i] > 1 && t->stride[i] == 0)
            return fe_set_error(FE_ERR_FORMAT,
                                "data.pkl: a tensor has stride 0 in dimension %d of size %lld "
                                "(an expanded view, not a weight)",
                                i, (long long)t->shape[i]);
        if (__builtin_mul_overflow((uint64_t)(t->shape[i] - 1), (uint64_t)t->stride[i], &span) ||
            __builtin_add_overflow(last, span, &last))
            return fe_pk_error(p, "tensor extent overflows");
    }
    if (numel > 0 && (__builtin_add_overflow(last, (uint64_t)t->offset, &last) ||
                      last >= t->storage->numel))
        return fe_set_error(FE_ERR_FORMAT,
                            "data.pkl: a tensor reaches element %llu of a storage of %llu",
                            (unsigned long long)last, (unsigned long long)t->storage->numel);
    /* Overlapping strides ((n, n) with strides (1, 1)) address few elements
     * many times; a weight never has more elements than its storage, so what
     * a tensor expands to is bounded by what the file holds, and numel times
     * the element size can no longer wrap. */
    if (numel > t->storage->numel)
        return fe_set_error(FE_ERR_FORMAT,
                            "data.pkl: a tensor of %llu elements views a storage of %llu "
                            "(overlapping strides)",
                            (unsigned long long)numel, (unsigned long long)t->storage->numel);
    *out = t;
    return FE_OK;
}

static fe_status fe_pk_reduce(FePickle *p) {
    FePkObj *args = NULL, *callable = NULL, *result = NULL;
    FE_TRY(fe_pk_pop(p, &args));
    FE_TRY(fe_pk_pop(p, &callable));
    if (callable->type != FE_PK_GLOBAL)
        return fe_pk_error(p, "REDUCE on something that is not a global");
    if (args->type != FE_PK_TUPLE)
        return fe_pk_error(p, "REDUCE arguments are not a tuple");
    switch (callable->global) {
    case FE_PK_GLOBAL_ORDERED_DICT:
        if (args->n_items != 0)
            return fe_pk_error(p, "OrderedDict() with arguments");
        FE_TRY(fe_pk_new(p, FE_PK_DICT, &result));
        break;
    case FE_PK_GLOBAL_REBUILD_TENSOR:
    case FE_PK_GLOBAL_REBUILD_TENSOR_V2:
        FE_TRY(fe_pk_rebuild_tensor(p, args, callable->global == FE_PK_GLOBAL_REBUILD_TENSOR_V2,
                                    &result));
        break;
    case FE_PK_GLOBAL_REBUILD_PARAMETER:
        /* (data, requires_grad, backward_hooks[, state]): a Parameter is its tensor. */
        if ((args->n_items != 3 && args->n_items != 4) || args->items[0]->type != FE_PK_TENSOR)
            return fe_pk_error(p, "_rebuild_parameter needs a tensor");
        result = args->items[0];
        break;
    case FE_PK_GLOBAL_STORAGE_TYPE:
    default:
        return fe_set_error(FE_ERR_UNSUPPORTED,
                            "refusing to call pickle global %.60s: only tensors and plain "
                            "containers are allowed",
                            callable->string);
    }
    return fe_pk_push(p, result);
}

static fe_status fe_pk_setitems(FePickle *p, size_t from) {
    FePkObj *dict;
    if ((p->n_stack - from) % 2 != 0)
        return fe_pk_error(p, "SETITEMS with an odd number of items");
    if (from == 0 || from <= (p->n_marks ? p->marks[p->n_marks - 1] : 0))
        return fe_pk_error(p, "SETITEMS without a dict");
    dict = p->stack[from - 1];
    if (dict->type != FE_PK_DICT)
        return fe_pk_error(p, "SETITEMS on something that is not a dict");
    for (size_t i = from; i < p->n_stack; i++)
        FE_TRY(fe_pk_add_item(dict, p->stack[i]));
    p->n_stack = from;
    return FE_OK;
}

static fe_status fe_pk_appends(FePickle *p, size_t from) {
    FePkObj *list;
    if (from == 0 || from <= (p->n_marks ? p->marks[p->n_marks - 1] : 0))
        return fe_pk_error(p, "APPENDS without a list");
    list = p->stack[from - 1];
    if (list->type != FE_PK_LIST)
        return fe_pk_error(p, "APPENDS on something that is not a list");
    for (size_t i = from; i < p->n_stack; i++)
        FE_TRY(fe_pk_add_item(list, p->stack[i]));
    p->n_stack = from;
    return FE_OK;
}

static fe_status fe_pk_run(FePickle *p, FePkObj **result) {
    char module[256], name[256];
    for (;;) {
        uint8_t op;
        size_t mark = 0;
        FePkObj *a = NULL, *b = NULL, *o = NULL;

        FE_TRY(fe_pk_need(p, 1));
        op = p->pkl[p->pos++];
        switch (op) {
        case 0x80: /* PROTO */
            FE_TRY(fe_pk_need(p, 1));
            if (p->pkl[p->pos] > 5)
                return fe_pk_error(p, "pickle protocol newer than 5");
            p->pos++;
            break;
        case 0x95: /* FRAME: a length hint only */
            FE_TRY(fe_pk_need(p, 8));
            p->pos += 8;
            break;
        case '.': /* STOP */
            return fe_pk_pop(p, result);
        case '(': /* MARK */
            if (p->n_marks == p->cap_marks) {
                size_t cap = p->cap_marks ? p->cap_marks * 2 : 16;
                size_t *grown;
                if (cap > FE_PK_MAX_STACK)
                    return fe_pk_error(p, "too many MARKs");
                grown = realloc(p->marks, cap * sizeof *grown);
                if (!grown)
                    return fe_pk_oom();
                p->marks = grown;
                p->cap_marks = cap;
            }
            p->marks[p->n_marks++] = p->n_stack;
            break;
        case '}': /* EMPTY_DICT */
        case ']': /* EMPTY_LIST */
        case ')': /* EMPTY_TUPLE */
            FE_TRY(fe_pk_new(p, op == '}' ? FE_PK_DICT : op == ']' ? FE_PK_LIST : FE_PK_TUPLE, &o));
            FE_TRY(fe_pk_push(p, o));
            break;
        case 'N': /* NONE */
        case 0x88: /* NEWTRUE */
        case 0x89: /* NEWFALSE */
            FE_TRY(fe_pk_new(p, op == 'N' ? FE_PK_NONE : FE_PK_BOOL, &o));
            o->integer = op == 0x88;
            FE_TRY(fe_pk_push(p, o));
            break;
        case 'X': /* BINUNICODE */
            FE_TRY(fe_pk_need(p, 4));
            p->pos += 4;
            FE_TRY(fe_pk_push_str(p, fe_pk_le(p->pkl + p->pos - 4, 4)));
            break;
        case 0x8c: /* SHORT_BINUNICODE */
            FE_TRY(fe_pk_need(p, 1));
            p->pos += 1;
            FE_TRY(fe_pk_push_str(p, p->pkl[p->pos - 1]));
            break;
        case 0x8d: /* BINUNICODE8 */
            FE_TRY(fe_pk_need(p, 8));
            p->pos += 8;
            FE_TRY(fe_pk_push_str(p, fe_pk_le(p->pkl + p->pos - 8, 8)));
            break;
        case 'q': /* BINPUT */
            FE_TRY(fe_pk_need(p, 1));
            FE_TRY(fe_pk_memo_put(p, p->pkl[p->pos++]));
            break;
        case 'r': /* LONG_BINPUT */
            FE_TRY(fe_pk_need(p, 4));
            p->pos += 4;
            FE_TRY(fe_pk_memo_put(p, fe_pk_le(p->pkl + p->pos - 4, 4)));
            break;
        case 0x94: /* MEMOIZE */
            FE_TRY(fe_pk_memo_put(p, p->memo_len));
            break;
        case 'h': /* BINGET */
            FE_TRY(fe_pk_need(p, 1));
            FE_TRY(fe_pk_memo_get(p, p->pkl[p->pos++]));
            break;
        case 'j': /* LONG_BINGET */
            FE_TRY(fe_pk_need(p, 4));
            p->pos += 4;
            FE_TRY(fe_pk_memo_get(p, fe_pk_le(p->pkl + p->pos - 4, 4)));
            break;
        case 'J': /* BININT */
            FE_TRY(fe_pk_need(p, 4));
            p->pos += 4;
            FE_TRY(fe_pk_push_int(p, (int32_t)(uint32_t)fe_pk_le(p->pkl + p->pos - 4, 4)));
            break;
        case 'K': /* BININT1 */
            FE_TRY(fe_pk_need(p, 1));
            FE_TRY(fe_pk_push_int(p, p->pkl[p->pos++]));
            break;
        case 'M': /* BININT2 */
            FE_TRY(fe_pk_need(p, 2));
            p->pos += 2;
            FE_TRY(fe_pk_push_int(p, (int64_t)fe_pk_le(p->pkl + p->pos - 2, 2)));
            break;
        case 0x8a: { /* LONG1: little-endian two's complement */
            uint8_t n;
            uint64_t v;
            FE_TRY(fe_pk_need(p, 1));
            n = p->pkl[p->pos++];
            if (n > 8)
                return fe_pk_error(p, "LONG1 integer wider than 64 bits");
            FE_TRY(fe_pk_need(p, n));
            v = fe_pk_le(p->pkl + p->pos, n);
            if (n > 0 && n < 8 && (p->pkl[p->pos + n - 1] & 0x80))
                v |= ~(uint64_t)0 << (8 * n);
            p->pos += n;
            FE_TRY(fe_pk_push_int(p, (int64_t)v));
            break;
        }
        case 'G': { /* BINFLOAT: big-endian double */
            uint64_t bits = 0;
            FE_TRY(fe_pk_need(p, 8));
            for (int i = 0; i < 8; i++)
                bits = (bits << 8) | p->pkl[p->pos + i];
            p->pos += 8;
            FE_TRY(fe_pk_new(p, FE_PK_FLOAT, &o));
            memcpy(&o->number, &bits, sizeof o->number);
            FE_TRY(fe_pk_push(p, o));
            break;
        }
        case 't': /* TUPLE */
            FE_TRY(fe_pk_pop_mark(p, &mark));
            FE_TRY(fe_pk_make_tuple(p, mark));
            break;
        case 0x85: /* TUPLE1 */
        case 0x86: /* TUPLE2 */
        case 0x87: { /* TUPLE3 */
            size_t n = (size_t)(op - 0x84);
            if (p->n_stack < fe_pk_floor(p) + n)
                return fe_pk_error(p, "stack underflow");
            FE_TRY(fe_pk_make_tuple(p, p->n_stack - n));
            break;
        }
        case 'c': /* GLOBAL */
            FE_TRY(fe_pk_line(p, module, sizeof module));
            FE_TRY(fe_pk_line(p, name, sizeof name));
            FE_TRY(fe_pk_push_global(p, module, name));
            break;
        case 0x93: /* STACK_GLOBAL */
            FE_TRY(fe_pk_pop(p, &b));
            FE_TRY(fe_pk_pop(p, &a));
            if (a->type != FE_PK_STR || b->type != FE_PK_STR)
                return fe_pk_error(p, "STACK_GLOBAL needs two strings");
            FE_TRY(fe_pk_push_global(p, a->string, b->string));
            break;
        case 'R': /* REDUCE */
            FE_TRY(fe_pk_reduce(p));
            break;
        case 'Q': /* BINPERSID */
            FE_TRY(fe_pk_pop(p, &a));
            FE_TRY(fe_pk_persistent(p, a, &o));
            FE_TRY(fe_pk_push(p, o));
            break;
        case 'b': /* BUILD: state_dict's _metadata on the OrderedDict */
            FE_TRY(fe_pk_pop(p, &a));
            FE_TRY(fe_pk_top(p, &b));
            if (b->type != FE_PK_DICT && b->type != FE_PK_TENSOR)
                return fe_pk_error(p, "BUILD on something that is not a dict or tensor");
            break;
        case 's': /* SETITEM */
            if (p->n_stack < fe_pk_floor(p) + 3)
                return fe_pk_error(p, "SETITEM without a dict");
            FE_TRY(fe_pk_setitems(p, p->n_stack - 2));
            break;
        case 'u': /* SETITEMS */
            FE_TRY(fe_pk_pop_mark(p, &mark));
            FE_TRY(fe_pk_setitems(p, mark));
            break;
        case 'a': /* APPEND */
            if (p->n_stack < fe_pk_floor(p) + 2)
                return fe_pk_error(p, "APPEND without a list");
            FE_TRY(fe_pk_appends(p, p->n_stack - 1));
            break;
        case 'e': /* APPENDS */
            FE_TRY(fe_pk_pop_mark(p, &mark));
            FE_TRY(fe_pk_appends(p, mark));
            break;
        case '0': /* POP */
            FE_TRY(fe_pk_pop(p, &a));
            break;
        case '1': /* POP_MARK */
            FE_TRY(fe_pk_pop_mark(p, &mark));
            p->n_stack = mark;
            break;
        case '2': /* DUP */
            FE_TRY(fe_pk_top(p, &a));
            FE_TRY(fe_pk_push(p, a));
            break;
        default: {
            char what[64];
            p->pos--;
            snprintf(what, sizeof what, "unsupported pickle opcode 0x%02x", op);
            return fe_pk_error(p, what);
        }
        }
    }
}

/* A tensor as a weight entry: in place when its elements are contiguous in
 * row-major order, else gathered into a contiguous owned copy. */
static fe_status fe_pk_tensor_entry(FeWeightFile *wf, const char *name, const FePkObj *t,
                                    uint64_t *copy_budget) {
    size_t esize = fe_dtype_size(t->dtype);
    uint64_t numel = 1, nbytes;
    int64_t expect = 1;
    bool contiguous = true;
    const uint8_t *base = t->storage->data;
    uint8_t *copy;
    int64_t index[8] = {0};

    /* fe_pk_rebuild_tensor bounded numel by the storage's, whose bytes are in
     * the file; checked again here so this function is safe on its own. */
    for (int i = 0; i < t->ndim; i++)
        if (__builtin_mul_overflow(numel, (uint64_t)t->shape[i], &numel))
            return fe_set_error(FE_ERR_FORMAT, "tensor '%.80s' is too large", name);
    if (numel > t->storage->numel || __builtin_mul_overflow(numel, (uint64_t)esize, &nbytes) ||
        nbytes > SIZE_MAX)
        return fe_set_error(FE_ERR_FORMAT, "tensor '%.80s' is larger than its storage", name);
    /* Before the contiguity test: with a 0 in the shape the other sizes may
     * be anything, and their product would overflow `expect`. */
    if (numel == 0)
        return fe_weights_add_entry(wf, name, t->dtype, t->ndim, t->shape, base, 0);
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->stride[i] != expect)
            contiguous = false;
        expect *= t->shape[i]; /* at most numel, itself at most the storage's */
    }
    /* Checked against the storage's size when the tensor was rebuilt. */
    base += (size_t)t->offset * esize;
    if (contiguous)
        return fe_weights_add_entry(wf, name, t->dtype, t->ndim, t->shape, base, (size_t)nbytes);
    /* Gathered copies together stay within the archive's size: a pickle that
     * names one large storage through a million transposed views would
     * otherwise multiply it. */
    if (nbytes > *copy_budget)
        return fe_set_error(FE_ERR_FORMAT,
                            "tensor '%.80s': non-contiguous tensors would copy more bytes than "
                            "the archive holds",
                            name);
    *copy_budget -= nbytes;
    copy = malloc((size_t)nbytes);
    if (!copy)
        return fe_pk_oom();
    FE_TRY(fe_weights_add_owned(wf, copy));
    for (uint64_t k = 0; k < numel; k++) {
        int64_t src = 0;
        for (int i = 0; i < t->ndim; i++)
            src += index[i] * t->stride[i];
        memcpy(copy + k * esize, base + (size_t)src * esize, esize);
        for (int i = t->ndim - 1; i >= 0; i--) {
            if (++index[i] < t->shape[i])
                break;
            index[i] = 0;
        }
    }
    return fe_weights_add_entry(wf, name, t->dtype, t->ndim, t->shape, copy, (size_t)nbytes);
}

static fe_status fe_pk_find_prefix(const FeZipArchive *zip, char *prefix, size_t size) {
    const char *found = NULL;
    for (size_t i = 0; i < zip->n_entries; i++) {
        const char *n = zip->entries[i].name;
        const char *slash = strchr(n, '/');
        if (slash && strcmp(slash, "/data.pkl") == 0) {
            if (found)
                return fe_set_error(FE_ERR_FORMAT, "archive holds more than one data.pkl");
            found = n;
        }
    }
    if (!found)
        return fe_set_error(FE_ERR_FORMAT,
                            "zip archive has no <name>/data.pkl: not a torch.save() file");
    if ((size_t)(strchr(found, '/') - found) + 2 > size)
        return fe_set_error(FE_ERR_FORMAT, "archive folder name too long");
    snprintf(prefix, size, "%.*s/", (int)(strchr(found, '/') - found), found);
    return FE_OK;
}

fe_status fe_pytorch_parse(const uint8_t *data, size_t len, FeWeightFile *wf) {
    FeZipArchive zip;
    FePickle p = {0};
    FePkObj *root = NULL;
    const FeZipEntry *pkl, *byteorder;
    char prefix[256], path[300];
    uint64_t copy_budget = len;
    fe_status st;

    if (!data || !wf)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_pytorch_parse: NULL argument");
    FE_TRY(fe_zip_open(data, len, &zip));
    st = fe_pk_find_prefix(&zip, prefix, sizeof prefix);
    if (st != FE_OK)
        goto out;
    snprintf(path, sizeof path, "%sbyteorder", prefix);
    byteorder = fe_zip_find(&zip, path);
    if (byteorder && byteorder->method == 0 &&
        !(byteorder->size == 6 && memcmp(byteorder->data, "little", 6) == 0)) {
        st = fe_set_error(FE_ERR_UNSUPPORTED, "big-endian PyTorch archives are not supported");
        goto out;
    }
    snprintf(path, sizeof path, "%sdata.pkl", prefix);
    pkl = fe_zip_find(&zip, path);
    if (pkl->method != 0) {
        st = fe_set_error(FE_ERR_UNSUPPORTED,
                          "zip entry '%.200s' is compressed (method %d); only stored entries "
                          "are supported - save with torch.save()",
                          path, pkl->method);
        goto out;
    }
    p.pkl = pkl->data;
    p.len = (size_t)pkl->size;
    p.zip = &zip;
    p.prefix = prefix;
    st = fe_pk_run(&p, &root);
    if (st == FE_OK && root->type != FE_PK_DICT)
        st = fe_set_error(FE_ERR_FORMAT,
                          "data.pkl holds a %s, not a state dict (save model.state_dict())",
                          fe_pk_type_name(root->type));
    for (size_t i = 0; st == FE_OK && i + 1 < root->n_items; i += 2) {
        const FePkObj *key = root->items[i], *value = root->items[i + 1];
        if (key->type != FE_PK_STR)
            st = fe_set_error(FE_ERR_FORMAT, "state dict key is a %s, not a string",
                              fe_pk_type_name(key->type));
        else if (value->type != FE_PK_TENSOR)
            st = fe_set_error(FE_ERR_FORMAT, "state dict entry '%.80s' is a %s, not a tensor",
                              key->string, fe_pk_type_name(value->type));
        else
            st = fe_pk_tensor_entry(wf, key->string, value, &copy_budget);
    }
    if (st == FE_OK)
        st = fe_weights_check_unique_names(wf);
out:
    for (size_t i = 0; i < p.n_objects; i++) {
        free(p.objects[i]->string);
        free(p.objects[i]->items);
        free(p.objects[i]);
    }
    free(p.objects);
    free(p.stack);
    free(p.marks);
    free(p.memo);
    fe_zip_close(&zip);
    return st;
}
