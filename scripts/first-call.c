/* first-call.c: the wall time of clprim_context_create and of one first call on
 * 10^7 floats, for docs/PERFORMANCE.md ("Time to the first result").
 * Build: gcc -O2 -Iinclude scripts/first-call.c -o first-call build/libclprim.a -lOpenCL -lm -lpthread
 * Run:   CLPRIM_CACHE_DIR=off CUDA_CACHE_DISABLE=1 POCL_CACHE_DIR=$(mktemp -d) ./first-call median
 * (families: median scan sum argmax select select_expr histogram topk). */
#include <clprim/clprim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec*1e-6;}
int main(int argc,char**argv){
  const char*fam=argc>1?argv[1]:"median";
  double t0=now();
  clprim_context*ctx; clprim_status st=clprim_context_create(&ctx,NULL);
  if(st){printf("ctx %s\n",clprim_status_name(st));return 1;}
  double t1=now();
  size_t n=10000000; cl_int err;
  float*h=malloc(n*4); for(size_t i=0;i<n;i++) h[i]=(float)((i*2654435761u)%1000003)/1000003.f;
  cl_mem in=clCreateBuffer(clprim_context_cl_context(ctx),CL_MEM_READ_WRITE|CL_MEM_COPY_HOST_PTR,n*4,h,&err);
  cl_mem out=clCreateBuffer(clprim_context_cl_context(ctx),CL_MEM_READ_WRITE,n*8,NULL,&err);
  cl_mem out2=clCreateBuffer(clprim_context_cl_context(ctx),CL_MEM_READ_WRITE,n*8,NULL,&err);
  clFinish(clprim_context_queue(ctx));
  double t2=now();
  clprim_value v; uint64_t c;
  if(!strcmp(fam,"median")) st=clprim_median(ctx,CLPRIM_FLOAT,in,n,0,&v,NULL);
  else if(!strcmp(fam,"scan")) st=clprim_scan_exclusive(ctx,CLPRIM_FLOAT,in,out,n);
  else if(!strcmp(fam,"sum")) st=clprim_reduce_sum(ctx,CLPRIM_FLOAT,in,n,&v,NULL);
  else if(!strcmp(fam,"argmax")) st=clprim_argmax(ctx,CLPRIM_FLOAT,in,n,0,&v,&c,NULL);
  else if(!strcmp(fam,"select")){clprim_predicate p={CLPRIM_PRED_GT};p.a.f32=0.5f;clprim_select_output o={0};o.values=out;o.count=&c;st=clprim_select(ctx,CLPRIM_FLOAT,in,n,&p,&o);}
  else if(!strcmp(fam,"select_expr")){clprim_select_output o={0};o.values=out;o.count=&c;st=clprim_select_expr(ctx,CLPRIM_FLOAT,in,n,"x > 0.5f",&o);}
  else if(!strcmp(fam,"histogram")){clprim_value lo={0},hi={0};hi.f32=1;st=clprim_histogram_even(ctx,CLPRIM_FLOAT,in,n,lo,hi,256,out,NULL);}
  else if(!strcmp(fam,"topk")) st=clprim_topk(ctx,CLPRIM_FLOAT,in,n,100,0,out,out2);
  clFinish(clprim_context_queue(ctx));
  double t3=now();
  printf("%s: create %.0f ms, first call %.0f ms (%s)\n",fam,t1-t0,t3-t2,clprim_status_name(st));
  clprim_context_free(ctx); return 0;}
