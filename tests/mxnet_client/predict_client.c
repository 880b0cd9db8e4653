/* An MXNet C predict API client, C99, built by mxnet_client_test.sh exactly as MXNet users build
 * theirs (cc -std=c99 -Wall -Werror prog.c $(pkg-config --cflags --libs mxnet)). It classifies
 * flat-coloured pictures with the colour classifier scripts/make_color_classifier.py writes
 * (global average pooling -> FullyConnected(3) -> softmax; class 0 red, 1 green, 2 blue):
 *   - one predictor (MXPredCreate): each colour gets its class;
 *   - MXPredCreatePartialOut with two outputs, the pooling layer's and the softmax: the pooled
 *     values are the picture's plane means;
 *   - MXPredCreateMultiThread: 4 predictors in 4 threads, 50 forwards each, every result equal
 *     to the single predictor's;
 *   - a malformed symbol fails with a message in MXGetLastError.
 * Usage: predict_client <model prefix> (reads <prefix>-symbol.json and <prefix>-0000.params) */
#define _POSIX_C_SOURCE 200809L
#include <mxnet/c_api.h> /* MXGetVersion */
#include <mxnet/c_predict_api.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kSide = 16, kPlane = kSide * kSide, kInputSize = 3 * kPlane, kClasses = 3, kThreads = 4, kForwards = 50 };
static const char* input_keys[] = {"data"};
static const uint32_t indptr[] = {0, 4};
static const uint32_t shape[] = {1, 3, kSide, kSide};

static int failures = 0;
#define EXPECT(cond)                                                     \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                        \
    }                                                                    \
  } while (0)
#define OK(call)                                                                                  \
  do {                                                                                            \
    if ((call) != 0) {                                                                            \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, MXGetLastError());     \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static char* ReadFile(const char* path, long* size) {
  FILE* f = fopen(path, "rb");
  char* buf;
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  *size = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)*size + 1);
  if (!buf || fread(buf, 1, (size_t)*size, f) != (size_t)*size) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  buf[*size] = 0;
  fclose(f);
  return buf;
}

/* A picture whose plane `colour` is bright and whose other planes are dim. */
static void Picture(int colour, float* pixels) {
  int c, i;
  for (c = 0; c < 3; ++c)
    for (i = 0; i < kPlane; ++i) pixels[c * kPlane + i] = c == colour ? 0.8f : 0.1f + 0.001f * (float)(i % 7);
}

static int ArgMax(const float* v, int n) {
  int best = 0, i;
  for (i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

static void Classify(PredictorHandle p, int colour, float* probabilities) {
  float pixels[kInputSize];
  Picture(colour, pixels);
  OK(MXPredSetInput(p, "data", pixels, kInputSize));
  OK(MXPredForward(p));
  OK(MXPredGetOutput(p, 0, probabilities, kClasses));
}

static float reference[kClasses][kClasses];

struct Job {
  PredictorHandle predictor;
  int colour, mismatches;
};

static void* RunJob(void* arg) {
  struct Job* job = (struct Job*)arg;
  int n, k;
  for (n = 0; n < kForwards; ++n) {
    float probabilities[kClasses];
    Classify(job->predictor, job->colour, probabilities);
    for (k = 0; k < kClasses; ++k)
      if (probabilities[k] != reference[job->colour][k]) ++job->mismatches;
  }
  return NULL;
}

int main(int argc, char** argv) {
  char path[4096];
  char *json, *params;
  long json_size, params_size;
  PredictorHandle single, partial, threaded[kThreads], broken = NULL;
  pthread_t threads[kThreads];
  struct Job jobs[kThreads];
  uint32_t *out_shape, out_ndim;
  int colour, t, version = 0;
  const char* output_keys[] = {"pool", "softmax"};
  float pooled[3], probabilities[kClasses], pixels[kInputSize];

  if (argc != 2) {
    fprintf(stderr, "usage: %s <model prefix>\n", argv[0]);
    return 2;
  }
  snprintf(path, sizeof path, "%s-symbol.json", argv[1]);
  json = ReadFile(path, &json_size);
  snprintf(path, sizeof path, "%s-0000.params", argv[1]);
  params = ReadFile(path, &params_size);

  OK(MXGetVersion(&version));
  printf("MXGetVersion: %d\n", version);

  OK(MXPredCreate(json, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape, &single));
  OK(MXPredGetOutputShape(single, 0, &out_shape, &out_ndim));
  EXPECT(out_ndim == 2 && out_shape[0] == 1 && out_shape[1] == kClasses);
  for (colour = 0; colour < kClasses; ++colour) {
    Classify(single, colour, reference[colour]);
    EXPECT(ArgMax(reference[colour], kClasses) == colour);
  }

  OK(MXPredCreatePartialOut(json, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape, 2,
                            output_keys, &partial));
  OK(MXPredGetOutputShape(partial, 0, &out_shape, &out_ndim));
  EXPECT(out_ndim == 4 && out_shape[1] == 3 && out_shape[2] == 1 && out_shape[3] == 1);
  OK(MXPredGetOutputShape(partial, 1, &out_shape, &out_ndim));
  EXPECT(out_ndim == 2 && out_shape[1] == kClasses);
  Picture(2, pixels);
  OK(MXPredSetInput(partial, "data", pixels, kInputSize));
  OK(MXPredForward(partial));
  OK(MXPredGetOutput(partial, 0, pooled, 3));
  OK(MXPredGetOutput(partial, 1, probabilities, kClasses));
  EXPECT(pooled[2] > 0.79f && pooled[2] < 0.81f && pooled[0] < 0.11f);
  EXPECT(ArgMax(probabilities, kClasses) == 2);

  OK(MXPredCreateMultiThread(json, params, (int)params_size, 1, 0, 1, input_keys, indptr, shape,
                             kThreads, threaded));
  for (t = 0; t < kThreads; ++t) {
    jobs[t].predictor = threaded[t];
    jobs[t].colour = t % kClasses;
    jobs[t].mismatches = 0;
    if (pthread_create(&threads[t], NULL, RunJob, &jobs[t]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  for (t = 0; t < kThreads; ++t) {
    pthread_join(threads[t], NULL);
    EXPECT(jobs[t].mismatches == 0);
    OK(MXPredFree(threaded[t]));
  }

  EXPECT(MXPredCreate("{not json", params, (int)params_size, 1, 0, 1, input_keys, indptr, shape, &broken) == -1);
  EXPECT(strlen(MXGetLastError()) > 0);

  OK(MXPredFree(single));
  OK(MXPredFree(partial));
  free(json);
  free(params);
  if (failures) return 1;
  printf("predict client: %d colours classified by 1, 2-output and %d threaded predictors\n", kClasses, kThreads);
  return 0;
}
