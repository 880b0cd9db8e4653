/* Drives MXNet's C predict API (mxnet/c_predict_api.h) of libmxnet.so through every function,
 * its error paths, and MXPredCreateMultiThread with 8 threads x 200 forwards of MTCNN's det3,
 * each bit-identical to a single-threaded run. Written in C as predict-API clients are.
 * Usage: capi_predict_test <dir with det3-symbol.json and det3-0001.params> [forwards]
 * Exits 77 (skipped) when the directory has no det3-symbol.json. */
#include <mxnet/c_predict_api.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define EXPECT(cond)                                                     \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                        \
    }                                                                    \
  } while (0)
/* A call that must succeed. */
#define OK(call)                                                                          \
  do {                                                                                    \
    if ((call) != 0) {                                                                    \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, MXGetLastError()); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)
/* A call that must fail with a message containing `needle`. */
#define FAILS(call, needle)                                                             \
  do {                                                                                  \
    int rc_ = (call);                                                                   \
    EXPECT(rc_ == -1);                                                                  \
    if (rc_ == -1 && !strstr(MXGetLastError(), needle)) {                               \
      fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__,       \
              MXGetLastError(), needle);                                                \
      ++failures;                                                                       \
    }                                                                                   \
  } while (0)

static char* ReadFile(const char* path, long* size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  *size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = malloc((size_t)*size + 1);
  if (fread(buf, 1, (size_t)*size, f) != (size_t)*size) exit(1);
  buf[*size] = 0;
  fclose(f);
  return buf;
}

enum { kThreads = 8, kInputSize = 3 * 48 * 48, kMaxOutputs = 3, kMaxOutputSize = 16 };
static const char* input_keys[] = {"data"};
static const uint32_t indptr[] = {0, 4};
static const uint32_t shape1[] = {1, 3, 48, 48};

static char* json;
static long json_size;
static char* params;
static long params_size;
static int forwards = 200;

static float inputs[kThreads][kInputSize];
static float reference[kThreads][kMaxOutputs][kMaxOutputSize];
static uint32_t output_sizes[kMaxOutputs];
static uint32_t num_outputs;

static void FillInput(float* x, int seed) {
  unsigned s = 12345u + 7919u * (unsigned)seed;
  for (int i = 0; i < kInputSize; ++i) {
    s = s * 1103515245u + 12345u;
    x[i] = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
}

static void Outputs(PredictorHandle p, float out[kMaxOutputs][kMaxOutputSize]) {
  for (uint32_t o = 0; o < num_outputs; ++o) OK(MXPredGetOutput(p, o, out[o], output_sizes[o]));
}

static int SameOutputs(float a[kMaxOutputs][kMaxOutputSize], float b[kMaxOutputs][kMaxOutputSize]) {
  for (uint32_t o = 0; o < num_outputs; ++o)
    if (memcmp(a[o], b[o], output_sizes[o] * sizeof(float)) != 0) return 0;
  return 1;
}

/* Runs `p` on inputs[index]: whether its outputs equal reference[index] to the bit. */
static int ForwardMatches(PredictorHandle p, int index) {
  float out[kMaxOutputs][kMaxOutputSize];
  OK(MXPredSetInput(p, "data", inputs[index], kInputSize));
  OK(MXPredForward(p));
  Outputs(p, out);
  return SameOutputs(out, reference[index]);
}

struct Worker {
  PredictorHandle handle;
  int index;
  int mismatches;
};

static void* RunWorker(void* arg) {
  struct Worker* w = arg;
  for (int r = 0; r < forwards; ++r)
    if (!ForwardMatches(w->handle, w->index)) ++w->mismatches;
  return NULL;
}

/* An error in another thread leaves this thread's MXGetLastError alone. */
static void* FailInThread(void* arg) {
  (void)arg;
  EXPECT(MXPredForward(NULL) == -1);
  EXPECT(strstr(MXGetLastError(), "MXPredForward") != NULL);
  return NULL;
}

static int monitor_calls;
static void Monitor(const char* name, NDArrayHandle array, void* user) {
  EXPECT(name != NULL && name[0] != 0);
  EXPECT(array != NULL);
  EXPECT(user == &monitor_calls);
  ++monitor_calls;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <mtcnn dir> [forwards per thread]\n", argv[0]);
    return 2;
  }
  if (argc > 2) forwards = atoi(argv[2]);
  char path[4096];
  /* The models live in ../shared beside the clone; without them the test is skipped (ctest's
   * SKIP_RETURN_CODE, tests/CMakeLists.txt), not failed. */
  snprintf(path, sizeof path, "%s/det3-symbol.json", argv[1]);
  FILE* probe = fopen(path, "rb");
  if (!probe) {
    printf("skipped: %s not found: this test needs MTCNN's det3 from ../shared\n", path);
    return 77;
  }
  fclose(probe);
  snprintf(path, sizeof path, "%s/det3-symbol.json", argv[1]);
  json = ReadFile(path, &json_size);
  snprintf(path, sizeof path, "%s/det3-0001.params", argv[1]);
  params = ReadFile(path, &params_size);

  /* Create, with errno as a failed dlopen would leave it: success clears it. */
  PredictorHandle pred = NULL;
  errno = ENOENT;
  OK(MXPredCreate(json, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape1, &pred));
  EXPECT(errno == 0);

  /* Outputs: shapes, types. */
  uint32_t* shape;
  uint32_t ndim;
  for (num_outputs = 0; num_outputs < kMaxOutputs + 1; ++num_outputs)
    if (MXPredGetOutputShape(pred, num_outputs, &shape, &ndim) != 0) break;
  EXPECT(num_outputs == 3);
  EXPECT(strstr(MXGetLastError(), "out of range") != NULL);
  for (uint32_t o = 0; o < num_outputs; ++o) {
    OK(MXPredGetOutputShape(pred, o, &shape, &ndim));
    EXPECT(ndim == 2 && shape[0] == 1);
    output_sizes[o] = shape[0] * shape[1];
    EXPECT(output_sizes[o] <= kMaxOutputSize);
    int dtype = -1;
    OK(MXPredGetOutputType(pred, o, &dtype));
    EXPECT(dtype == 0);
  }

  /* Single-threaded reference outputs for each thread's input. */
  for (int t = 0; t < kThreads; ++t) {
    FillInput(inputs[t], t);
    OK(MXPredSetInput(pred, "data", inputs[t], kInputSize));
    OK(MXPredForward(pred));
    Outputs(pred, reference[t]);
  }
  /* The softmax output (a probability pair) sums to 1 for some output. */
  int has_probability = 0;
  for (uint32_t o = 0; o < num_outputs; ++o)
    if (output_sizes[o] == 2) {
      float s = reference[0][o][0] + reference[0][o][1];
      has_probability = s > 0.999f && s < 1.001f;
    }
  EXPECT(has_probability);
  EXPECT(!SameOutputs(reference[0], reference[1]));

  /* PartialForward: step 0 onwards, one op each, until no steps are left gives the same outputs. */
  {
    float out[kMaxOutputs][kMaxOutputSize];
    int step_left = 1, steps = 0;
    OK(MXPredSetInput(pred, "data", inputs[2], kInputSize));
    for (int step = 0; step_left != 0; ++step, ++steps) {
      OK(MXPredPartialForward(pred, step, &step_left));
      EXPECT(step_left == 0 || step_left < 100);
    }
    EXPECT(steps > 10); /* one op per step */
    Outputs(pred, out);
    EXPECT(SameOutputs(out, reference[2]));
    FAILS(MXPredPartialForward(pred, 0, NULL), "step_left");
  }

  /* Monitor callback: called once per node output. */
  OK(MXPredSetMonitorCallback(pred, Monitor, &monitor_calls, false));
  OK(MXPredForward(pred));
  EXPECT(monitor_calls > 10);
  int op_outputs = monitor_calls;
  monitor_calls = 0;
  OK(MXPredSetMonitorCallback(pred, Monitor, &monitor_calls, true));
  OK(MXPredForward(pred));
  EXPECT(monitor_calls > op_outputs); /* each node's inputs too */
  OK(MXPredSetMonitorCallback(pred, NULL, NULL, false));

  /* Reshape to batch 2: each row equals the batch-1 result. */
  {
    const uint32_t shape2[] = {2, 3, 48, 48};
    PredictorHandle pred2 = NULL;
    OK(MXPredReshape(1, input_keys, indptr, shape2, pred, &pred2));
    static float batch[2 * kInputSize];
    memcpy(batch, inputs[3], sizeof inputs[3]);
    memcpy(batch + kInputSize, inputs[4], sizeof inputs[4]);
    OK(MXPredSetInput(pred2, "data", batch, 2 * kInputSize));
    OK(MXPredForward(pred2));
    for (uint32_t o = 0; o < num_outputs; ++o) {
      float out[2 * kMaxOutputSize];
      OK(MXPredGetOutputShape(pred2, o, &shape, &ndim));
      EXPECT(shape[0] == 2);
      OK(MXPredGetOutput(pred2, o, out, 2 * output_sizes[o]));
      for (uint32_t k = 0; k < output_sizes[o]; ++k) {
        float d0 = out[k] - reference[3][o][k], d1 = out[output_sizes[o] + k] - reference[4][o][k];
        EXPECT(d0 < 1e-5f && d0 > -1e-5f && d1 < 1e-5f && d1 > -1e-5f);
      }
    }
    /* The old predictor still works after the reshape. */
    EXPECT(ForwardMatches(pred, 5));
    FAILS(MXPredReshape(1, input_keys, indptr, shape2, pred, NULL), "'out' is null");
    const char* bad_keys[] = {"nope"};
    PredictorHandle unused;
    FAILS(MXPredReshape(1, bad_keys, indptr, shape2, pred, &unused), "'nope'");
    OK(MXPredFree(pred2));
  }

  /* CreateEx with an explicit float32 input type; PartialOut with an internal output. */
  {
    const char* dtype_names[] = {"data"};
    const int dtypes[] = {0};
    PredictorHandle ex = NULL;
    OK(MXPredCreateEx(json, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape1, 1,
                      dtype_names, dtypes, &ex));
    EXPECT(ForwardMatches(ex, 6));
    OK(MXPredFree(ex));
    const int bad_dtypes[] = {99};
    FAILS(MXPredCreateEx(json, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape1, 1,
                         dtype_names, bad_dtypes, &ex),
          "MXPredCreateEx");

    const char* output_keys[] = {"conv1", "pool3_output"};
    PredictorHandle partial = NULL;
    OK(MXPredCreatePartialOut(json, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape1,
                              2, output_keys, &partial));
    OK(MXPredGetOutputShape(partial, 0, &shape, &ndim));
    EXPECT(ndim == 4 && shape[0] == 1 && shape[1] == 32 && shape[2] == 46 && shape[3] == 46);
    OK(MXPredGetOutputShape(partial, 1, &shape, &ndim));
    EXPECT(ndim == 4 && shape[1] == 64);
    OK(MXPredSetInput(partial, "data", inputs[0], kInputSize));
    OK(MXPredForward(partial));
    static float conv1[32 * 46 * 46];
    OK(MXPredGetOutput(partial, 0, conv1, 32 * 46 * 46));
    float sum = 0;
    for (int i = 0; i < 32 * 46 * 46; ++i) sum += conv1[i] < 0 ? -conv1[i] : conv1[i];
    EXPECT(sum > 0);
    OK(MXPredFree(partial));
    const char* missing_output[] = {"no_such_layer"};
    FAILS(MXPredCreatePartialOut(json, params, (int)params_size, 1, 0, 1, input_keys, indptr,
                                 shape1, 1, missing_output, &partial),
          "no_such_layer");
  }

  /* The JSON may lack a NUL terminator or be followed by other bytes. */
  {
    char* unterminated = malloc((size_t)json_size);
    memcpy(unterminated, json, (size_t)json_size);
    long end = json_size;
    while (end > 0 && unterminated[end - 1] != '}') --end; /* buffer ends at the closing brace */
    char* exact = malloc((size_t)end);
    memcpy(exact, json, (size_t)end);
    PredictorHandle p = NULL;
    OK(MXPredCreate(exact, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape1, &p));
    OK(MXPredFree(p));
    char* trailing = malloc((size_t)json_size + 32);
    memcpy(trailing, json, (size_t)json_size);
    strcpy(trailing + json_size, "\n{\"garbage\": ]]]");
    OK(MXPredCreate(trailing, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape1, &p));
    OK(MXPredFree(p));
    free(unterminated);
    free(exact);
    free(trailing);
  }

  /* Error paths: each returns -1 with a message naming the call and the cause. */
  {
    PredictorHandle p = NULL;
    float small[4] = {0};
    FAILS(MXPredCreate(json, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape1, NULL),
          "MXPredCreate: argument 'out' is null");
    FAILS(MXPredCreate(NULL, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape1, &p),
          "symbol_json_str");
    FAILS(MXPredCreate("{\"nodes\": [", params, (int)params_size, 1, 0, 1, input_keys, indptr,
                       shape1, &p),
          "before its top-level object closes");
    FAILS(MXPredCreate("not json", params, (int)params_size, 1, 0, 1, input_keys, indptr, shape1,
                       &p),
          "must start with '{'");
    FAILS(MXPredCreate(json, params, (int)params_size, 7, 0, 1, input_keys, indptr, shape1, &p),
          "unknown device type 7");
    /* A GPU device (2) is accepted and computes on the CPU, with the same results. */
    OK(MXPredCreate(json, params, (int)params_size, 2, 0, 1, input_keys, indptr, shape1, &p));
    EXPECT(ForwardMatches(p, 1));
    OK(MXPredFree(p));
    FAILS(MXPredCreate(json, params, 100, 1, 0, 1, input_keys, indptr, shape1, &p), "MXPredCreate");
    FAILS(MXPredCreate(json, NULL, 100, 1, 0, 1, input_keys, indptr, shape1, &p), "param_bytes");
    const char* wrong_key[] = {"image"};
    FAILS(MXPredCreate(json, params, (int)params_size, 1, 0, 1, wrong_key, indptr, shape1, &p),
          "'image' is given an input shape but is not an input");
    const uint32_t wrong_shape[] = {1, 3, 40, 48};
    FAILS(MXPredCreate(json, params, (int)params_size, 1, 0, 1, input_keys, indptr, wrong_shape,
                       &p),
          "MXPredCreate");
    FAILS(MXPredCreateMultiThread(json, params, (int)params_size, 1, 0, 1, input_keys, indptr,
                                  shape1, 0, &p),
          "num_threads");

    OK(MXPredCreate(json, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape1, &p));
    FAILS(MXPredSetInput(p, "data", small, 4), "takes 6912 values, got size 4");
    FAILS(MXPredSetInput(p, "label", small, 4), "'label' is not an input");
    FAILS(MXPredSetInput(p, NULL, small, 4), "'key' is null");
    FAILS(MXPredSetInput(p, "data", NULL, kInputSize), "'data' is null");
    FAILS(MXPredGetOutput(p, 0, small, 4), "got size 4");
    FAILS(MXPredGetOutput(p, 7, small, 4), "out of range");
    FAILS(MXPredGetOutputShape(p, 0, NULL, &ndim), "shape_data");
    FAILS(MXPredGetOutputType(p, 0, NULL), "out_dtype");
    FAILS(MXPredForward(NULL), "MXPredForward: argument 'handle' is a null PredictorHandle");
    OK(MXPredFree(p));
    FAILS(MXPredForward(p), "not a live PredictorHandle");
    FAILS(MXPredFree(p), "MXPredFree");
    FAILS(MXNDListFree(pred), "is a PredictorHandle, expected a NDListHandle");

    /* Errors are per thread. */
    FAILS(MXPredGetOutput(pred, 9, small, 4), "MXPredGetOutput");
    pthread_t t;
    pthread_create(&t, NULL, FailInThread, NULL);
    pthread_join(t, NULL);
    EXPECT(strstr(MXGetLastError(), "MXPredGetOutput") != NULL);
  }

  /* NDList: the params file as a list of named arrays. */
  {
    NDListHandle list = NULL;
    uint32_t length = 0;
    OK(MXNDListCreate(params, (int)params_size, &list, &length));
    EXPECT(length > 10);
    const char* key;
    const float* data;
    const uint32_t* list_shape;
    int found_conv1_weight = 0;
    for (uint32_t i = 0; i < length; ++i) {
      OK(MXNDListGet(list, i, &key, &data, &list_shape, &ndim));
      if (strcmp(key, "arg:conv1_weight") == 0) {
        found_conv1_weight = 1;
        EXPECT(ndim == 4 && list_shape[0] == 32 && list_shape[1] == 3 && list_shape[2] == 3);
        EXPECT(data != NULL);
      }
    }
    EXPECT(found_conv1_weight);
    FAILS(MXNDListGet(list, length, &key, &data, &list_shape, &ndim), "out of range");
    FAILS(MXNDListGet(list, 0, NULL, &data, &list_shape, &ndim), "out_key");
    OK(MXNDListFree(list));
    FAILS(MXNDListGet(list, 0, &key, &data, &list_shape, &ndim), "not a live NDListHandle");
    FAILS(MXNDListCreate(params, 20, &list, &length), "MXNDListCreate");
    FAILS(MXNDListCreate(NULL, 20, &list, &length), "nd_file_bytes");
  }
  OK(MXPredFree(pred));

  /* 8 threads, each with its own predictor over one shared copy of the parameters. */
  {
    PredictorHandle handles[kThreads];
    OK(MXPredCreateMultiThread(json, params, (int)params_size, 1, 0, 1, input_keys, indptr,
                               shape1, kThreads, handles));
    pthread_t threads[kThreads];
    struct Worker workers[kThreads];
    for (int t = 0; t < kThreads; ++t) {
      workers[t].handle = handles[t];
      workers[t].index = t;
      workers[t].mismatches = 0;
      pthread_create(&threads[t], NULL, RunWorker, &workers[t]);
    }
    int mismatches = 0;
    for (int t = 0; t < kThreads; ++t) {
      pthread_join(threads[t], NULL);
      mismatches += workers[t].mismatches;
      OK(MXPredFree(handles[t]));
    }
    printf("multi-thread: %d threads x %d forwards, %d differ from the single-threaded run\n",
           kThreads, forwards, mismatches);
    EXPECT(mismatches == 0);
  }

  free(json);
  free(params);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("c_predict_api: all checks passed\n");
  return 0;
}
